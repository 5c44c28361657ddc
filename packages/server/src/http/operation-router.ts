// The one router of both listeners, compiled from the contract's operation table: a request path
// either names one of a listener's operations (with its decoded path parameters), names one with a
// method the contract does not give it (405), or names none (the listener's shell answers it).
//
// Matching follows the conventions clients rely on: literal segments compare case-insensitively,
// one trailing slash is ignored, and a path parameter is one non-empty segment, percent-decoded
// (an encoded slash stays inside the value). Broken percent-encoding in a parameter is a 400.
// Exact literal paths are one Map look-up; only paths with a parameter, case variants and
// trailing slashes walk the segment matchers.
import { operations, type OperationId } from '@catalog/contract';
import { HttpRefusal } from './errors.ts';

export type Listener = (typeof operations)[OperationId]['listener'];

export type RouteMatch<Id extends OperationId = OperationId> =
  | { kind: 'operation'; operationId: Id; params: Record<string, string> }
  /** The path is an operation's, the method is not: answer 405 with `allow`. */
  | { kind: 'method_not_allowed'; operationId: Id; allow: string };

export type OperationRouter<Id extends OperationId = OperationId> = (method: string, path: string) => RouteMatch<Id> | null;

interface CompiledRoute<Id extends OperationId> {
  operationId: Id;
  methods: ReadonlySet<string>;
  allow: string;
  /** Lower-cased literal segments, or null where the template has a parameter. */
  segments: (string | null)[];
  names: string[];
}

/** The operations of the contract's table that `L` serves. */
export type OperationOf<L extends Listener> = { [Id in OperationId]: (typeof operations)[Id]['listener'] extends L ? Id : never }[OperationId];

export function operationsOf<L extends Listener>(listener: L): OperationOf<L>[] {
  return (Object.keys(operations) as OperationId[]).filter((id): id is OperationOf<L> => operations[id].listener === listener);
}

export function createOperationRouter<Id extends OperationId>(operationIds: readonly Id[]): OperationRouter<Id> {
  const routes: CompiledRoute<Id>[] = operationIds.map((operationId) => {
    const { method, path } = operations[operationId];
    // A GET answers HEAD too (Node sends the head without the body).
    const methods = new Set<string>(method === 'GET' ? ['GET', 'HEAD'] : [method]);
    const parts = path.split('/').slice(1);
    const names: string[] = [];
    const segments = parts.map((part) => {
      const parameter = /^\{([^}]+)\}$/.exec(part);
      if (parameter === null) return part.toLowerCase();
      names.push(parameter[1] as string);
      return null;
    });
    return { operationId, methods, allow: [...methods].join(', '), segments, names };
  });
  const exact = new Map<string, CompiledRoute<Id>>();
  for (const route of routes) {
    if (route.names.length === 0) exact.set(`/${route.segments.join('/')}`, route);
  }

  const answer = (route: CompiledRoute<Id>, method: string, params: Record<string, string>): RouteMatch<Id> =>
    route.methods.has(method)
      ? { kind: 'operation', operationId: route.operationId, params }
      : { kind: 'method_not_allowed', operationId: route.operationId, allow: route.allow };

  return (method, path) => {
    const literal = exact.get(path);
    if (literal !== undefined) return answer(literal, method, {});
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const parts = trimmed.split('/').slice(1);
    for (const route of routes) {
      const params = matchSegments(route, parts);
      if (params !== null) return answer(route, method, params);
    }
    return null;
  };
}

function matchSegments<Id extends OperationId>(route: CompiledRoute<Id>, parts: string[]): Record<string, string> | null {
  if (parts.length !== route.segments.length) return null;
  const params: Record<string, string> = {};
  let name = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const segment = route.segments[i];
    if (segment === null) {
      if (part === '') return null;
      params[route.names[name++] as string] = decodeSegment(part);
    } else if (part !== segment && part.toLowerCase() !== segment) {
      return null;
    }
  }
  return params;
}

function decodeSegment(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpRefusal('invalid_request', 'The request URL is malformed (bad percent-encoding or characters); encode it and retry.');
  }
}
