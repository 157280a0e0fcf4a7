// Small data in a shared link: the rows as text, deflated (CompressionStream 'deflate-raw') and base64url-encoded
// into the URL's fragment, which the browser never sends to a server. Larger data stays behind, and the link says so.

/** Characters of packed data a link may carry; links much longer than this are cut by chat programs and mailers. */
export const LINK_DATA_LIMIT = 16_000;
// Unpacked, a link's data may not exceed this (a hostile link could hold a deflate bomb).
const MAX_TEXT = 4e6;
// Rows beyond which packing is not tried: deflated, a row of two numbers takes 2 bytes at the very least, so 8,000
// rows could never fit, and writing 10⁵ rows as text would hold the main thread for 100 ms or more.
const MAX_ROWS = 8_000;

function base64url(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/**
 * `data` ({ names, x, y, dim, xKinds?, centres? }) packed for a link, or null when the packed text would pass
 * LINK_DATA_LIMIT. Numbers are written as JavaScript writes a float64 (shortest round trip), so the link reproduces
 * them exactly; date and time columns keep their kind and centre (axes.js), so they plot as dates again.
 */
export async function packData({ names, x, y, dim, xKinds, centres }) {
  if (y.length > MAX_ROWS) return null;
  const lines = [JSON.stringify(xKinds ? { names, dim, xKinds, centres } : { names, dim })];
  for (let i = 0; i < y.length; i++) lines.push([...x.subarray(i * dim, (i + 1) * dim), y[i]].join(','));
  const stream = new Blob([lines.join('\n')]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  // Base64 grows the bytes by a third: skip encoding what cannot fit.
  if ((bytes.length * 4) / 3 > LINK_DATA_LIMIT) return null;
  return base64url(bytes);
}

/** The data packed by packData, checked row by row; throws an Error saying what is wrong with the link. */
export async function unpackData(packed) {
  let bytes;
  try {
    bytes = fromBase64url(packed);
  } catch {
    throw new Error('its data is not valid base64url (was the link cut short?)');
  }
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.length > MAX_TEXT) {
        reader.cancel();
        throw new Error(`its data unpacks to over ${MAX_TEXT / 1e6} MB of text`);
      }
    }
  } catch (err) {
    throw new Error(
      err.message.startsWith('its data') ? err.message : 'its data does not unpack (was the link cut short?)',
    );
  }
  const [head, ...rows] = text.split('\n');
  let meta;
  try {
    meta = JSON.parse(head);
  } catch {
    meta = null;
  }
  const { names, dim, xKinds, centres } = meta ?? {};
  if (
    ![1, 2].includes(dim) ||
    !Array.isArray(names) ||
    names.length !== dim + 1 ||
    !names.every((n) => typeof n === 'string')
  ) {
    throw new Error('its data has no valid header');
  }
  const dates = xKinds !== undefined;
  if (
    dates &&
    !(
      Array.isArray(xKinds) &&
      xKinds.length === dim &&
      xKinds.every((k) => ['number', 'date', 'time'].includes(k)) &&
      Array.isArray(centres) &&
      centres.length === dim &&
      centres.every(Number.isFinite)
    )
  ) {
    throw new Error('its data has no valid header');
  }
  if (rows.length < 2 || rows.length > MAX_ROWS) throw new Error(`its data has ${rows.length} rows`);
  const x = new Float64Array(rows.length * dim);
  const y = new Float64Array(rows.length);
  rows.forEach((row, i) => {
    const fields = row.split(',').map(Number);
    if (fields.length !== dim + 1 || !fields.every(Number.isFinite))
      throw new Error(`row ${i + 1} of its data is not ${dim + 1} numbers`);
    x.set(fields.slice(0, dim), i * dim);
    y[i] = fields[dim];
  });
  return { names: names.map((n) => n.slice(0, 200)), x, y, dim, ...(dates ? { xKinds, centres } : {}) };
}
