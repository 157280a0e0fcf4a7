// Which build the suites that import this run on: init()'s default ('auto': the pthreads build in Node), or with
// KA_TEST_THREADS=n the build init({ threads: n }) gives (1 = the single-thread module). scripts/test.sh runs both.
export const initOptions = process.env.KA_TEST_THREADS ? { threads: Number(process.env.KA_TEST_THREADS) } : undefined;
