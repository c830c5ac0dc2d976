import { SCOPES_API_PATH, ScopeInfo, ScopeUpdate } from '../ctrlz/scope-info';
import { UserError } from '../shared/user-error';

/** One HTTP exchange with a port of a pod (the reach layer's port-forward; its shape). */
export type PodRequest = (request: { method?: string; path: string; body?: string; headers?: Record<string, string> }) => Promise<{ status: number; body: Buffer }>;

/**
 * The scopes API of one daemon's introspection facility, reached by `send` (through a
 * port-forward). Errors name the daemon (`where`) and what it answered.
 */
export class ControlzClient {
  constructor(
    private readonly send: PodRequest,
    /** `pod <name>.<namespace> port <n>`, for messages. */
    readonly where: string,
  ) {}

  async scopes(): Promise<ScopeInfo[]> {
    const answer = await this.exchange('GET', `${SCOPES_API_PATH}/`);
    const value = parse(answer, this.where);
    if (!Array.isArray(value) || !value.every(isScopeInfo)) throw new UserError(`${this.where}: the scopes answer is not a list of scopes`);
    return value.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Changes one scope; resolves with the scope as the daemon now has it. */
  async update(scope: string, update: ScopeUpdate): Promise<ScopeInfo> {
    const answer = await this.exchange('PUT', `${SCOPES_API_PATH}/${encodeURIComponent(scope)}`, JSON.stringify({ name: scope, ...update }));
    const value = parse(answer, this.where);
    if (!isScopeInfo(value)) throw new UserError(`${this.where}: the answer to changing scope ${scope} is not a scope`);
    return value;
  }

  private async exchange(method: string, path: string, body?: string): Promise<Buffer> {
    let answer: { status: number; body: Buffer };
    try {
      answer = await this.send({ method, path, body, headers: body === undefined ? undefined : { 'Content-Type': 'application/json' } });
    } catch (err) {
      throw new UserError(`cannot reach the introspection facility (ControlZ) of ${this.where}: ${(err as Error).message}`);
    }
    if (answer.status < 200 || answer.status > 299) {
      throw new UserError(`${method} ${path} on ${this.where}: ${answer.status} ${errorText(answer.body)}`);
    }
    return answer.body;
  }
}

function parse(body: Buffer, where: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new UserError(`${where}: the introspection facility did not answer JSON (is --ctrlz_port the daemon's ControlZ port?)`);
  }
}

/** The daemon's `{"error": ...}`, else the start of the body. */
function errorText(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    const value = JSON.parse(text) as { error?: unknown };
    if (typeof value.error === 'string') return value.error;
  } catch {
    // not JSON: shown as is
  }
  return text.trim().slice(0, 200);
}

function isScopeInfo(v: unknown): v is ScopeInfo {
  const s = v as ScopeInfo;
  return typeof s === 'object' && s !== null && typeof s.name === 'string' && typeof s.output_level === 'string' && typeof s.stack_trace_level === 'string';
}
