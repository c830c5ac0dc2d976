import { DEBUG_TYPE } from '../xds/debug-requests';
import { DaemonSession } from './daemon-session';
import { RawDiscoveryResponse } from './debug-client';
import { instanceId } from './sync-status';

/**
 * `meshctl experimental internal-debug <type>`: the daemon's debug page `<type>` (`syncz`,
 * `configz`, `config_dump?proxyID=<id>`...) asked over xDS as `mesh.io/debug`, printed as the
 * incumbent prints it: one daemon's JSON (the first that has the answer), or with `--all`
 * one object with every daemon's answer under its instance ID.
 */

export async function internalDebug(session: DaemonSession, debugType: string, all: boolean): Promise<string> {
  if (!all) return answerText(await session.askFirst(DEBUG_TYPE, [debugType]));
  const answers = await session.askAll(DEBUG_TYPE, [debugType]);
  if (answers.every((a) => a.error)) throw answers[0].error!;
  const byInstance: Record<string, unknown> = {};
  for (const a of answers) {
    const key = a.response ? instanceId(a.response.controlPlane) || a.label : a.label;
    // A debug answer is one resource; a daemon that could not answer says why in its place.
    const resource = a.response?.resources[0];
    byInstance[key] = a.response ? (resource ? parsed(resource.value) : null) : { error: a.error!.message };
  }
  return `${JSON.stringify(byInstance, null, 2)}\n`;
}

/** Each resource's JSON indented, or its text as is when it is not JSON. */
function answerText(response: RawDiscoveryResponse): string {
  return response.resources
    .map((r) => {
      const value = parsed(r.value);
      return `${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`;
    })
    .join('');
}

function parsed(value: Buffer): unknown {
  const text = value.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
