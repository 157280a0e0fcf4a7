// A server component rendered on every request (next start runs it in Node).
import { Results } from '../results.js';

export const dynamic = 'force-dynamic';

export default function Page() {
  return <Results />;
}
