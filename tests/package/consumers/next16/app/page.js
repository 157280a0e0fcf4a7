// A server component rendered once, at build time (next build runs it in Node).
import { Results } from './results.js';

export default function Page() {
  return <Results />;
}
