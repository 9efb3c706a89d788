import type { TestApp } from './app';

/**
 * Every route the app serves, from Fastify's own route tree (printRoutes), so a new route is
 * covered by the suites that walk them without touching them. HEAD is GET without the body.
 */
export function routesOf(t: TestApp): { method: string; path: string }[] {
  const tree = t.app.getHttpAdapter().getInstance().printRoutes();
  const stack: string[] = [];
  const routes: { method: string; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([^)]*)\))?$/.exec(line.replace(/\s+$/, ''));
    if (!match) continue;
    const depth = match[1].length / 4;
    stack.length = depth;
    stack.push(match[2]);
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter((m) => m && m !== 'HEAD')) {
      routes.push({ method, path: stack.join('') });
    }
  }
  return routes;
}
