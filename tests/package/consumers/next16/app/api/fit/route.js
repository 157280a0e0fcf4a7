// A route handler: the results as JSON, computed on each request.
import { init } from 'kernel-attention';
import { compute } from '../../compute.js';

export const dynamic = 'force-dynamic';

export async function GET() {
  return Response.json([compute(await init())]);
}
