// No configuration: the package needs none in Next.js 16, with Turbopack or webpack (nextjs.test.mjs).
export default {};
