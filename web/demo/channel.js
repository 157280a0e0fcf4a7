// Request/answer over postMessage: every request carries an id, and each answer settles the promise of its id.

/**
 * A worker with request ids: call(op, payload, transfer) resolves with the answer to that request, or rejects with its
 * error; messages without a waiting request (progress) go to `onOther`, a worker that fails to start to `onError`.
 */
export function channel(worker, onOther, onError) {
  let nextId = 1;
  const waiting = new Map();
  worker.onmessage = ({ data }) => {
    const done = waiting.get(data.id);
    if (!done || data.op === 'progress') {
      onOther?.(data);
      return;
    }
    waiting.delete(data.id);
    // `argument` names the setting that would fix a refusal (the reader's option, say): the page focuses it.
    if (data.error) done.reject(Object.assign(new Error(data.error), data.argument ? { argument: data.argument } : {}));
    else done.resolve(data);
  };
  worker.onerror = (event) => onError(new Error(event.message || 'worker failed to start'));
  return (op, payload = {}, transfer = []) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, op, ...payload }, transfer);
    });
}
