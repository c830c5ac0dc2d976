import * as fs from 'node:fs';
import { inject } from 'inversify';
import { parse as parseYaml } from 'yaml';
import { arrayFlag, boolFlag, command, intFlag, listFlag, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { configFileLimits, ConfigLimitSettingError, KindRegistry, KindRegistryToken } from '../../../src/modules/config';
import { ConfigSnapshot } from '../../../src/modules/config/store';
import {
  AuthzSimulator, checkRequest, ClaimsSigner, ClusterWorkloads, FileWorkloads, formatMatrix, formatOne, meetsExpectation, OutputFormat, overlay, parseClaims,
  parseHeaders, parseLabels, portOf, readConfigFiles, requestFromEntry, SimRequest, usage, withKeySets, Workloads,
} from '../../../src/modules/authz-sim';
import { readMeshState } from '../../../src/modules/diagnose/describe/mesh-state';
import { getObject } from '../../../src/modules/diagnose/orch-reads';
import { MESH_CONFIG_MAP } from '../../../src/modules/discovery/mesh-configmap';
import { CONFIG_MAPS } from '../../../src/modules/orch';
import { MeshConfig } from '../../../src/modules/mesh-config';
import { MeshctlOrchFlags, OrchAccess } from '../../../src/modules/orch-access';
import { Settings, SettingsToken } from '../../../src/modules/settings';
import { withOrchAccess } from '../orch-access-scope';

/** A requests file is read whole: a policy suite, not a traffic log. */
const MAX_REQUESTS_FILE_BYTES = 4 * 1024 * 1024;
const MAX_REQUESTS = 10_000;

type Flags = MeshctlOrchFlags & {
  namespace?: string;
  meshNamespace: string;
  filename?: string[];
  cluster: boolean;
  to?: string;
  'to-labels'?: string;
  port?: number;
  method: string;
  path: string;
  host?: string;
  header?: string[];
  from?: string;
  principal?: string;
  'source-namespace'?: string;
  'source-ip'?: string;
  token?: string;
  jwks?: string;
  claims?: string;
  issuer?: string;
  requests?: string;
  output: string;
};

@command({
  program: 'meshctl',
  path: 'experimental authz simulate',
  aliases: ['sim'],
  summary: "Simulate a request against a workload's authentication and authorization policies: would it be allowed, and by which rule?",
  usage: 'experimental authz simulate (--to <pod>[.<namespace>] | --to-labels <k=v,...> -n <namespace>) [request flags] [-f <file or dir>]... [--requests <file>]',
  flags: {
    filename: listFlag('policy files or directories (as validate reads them); repeatable. Without --cluster, only these are simulated', { char: 'f' }),
    cluster: boolFlag('also read the live cluster (the default without -f); files then overlay what runs'),
    to: stringFlag('destination: <pod>[.<namespace>] (a WorkloadEntry name when only files are read)'),
    'to-labels': stringFlag('destination by labels (k=v,...) in the namespace of -n'),
    port: intFlag('the destination service port (default: its only port)', { min: 1, max: 65535 }),
    method: stringFlag('request method', { default: 'GET' }),
    path: stringFlag('request path with query', { default: '/' }),
    host: stringFlag('Host header (default: <workload>.<namespace>.svc.cluster.local)'),
    header: arrayFlag('request header name=value; repeatable'),
    from: stringFlag('source workload: <pod>[.<namespace>]; its identity (mutual TLS) and address'),
    principal: stringFlag('source identity, spiffe://<trust domain>/ns/<ns>/sa/<sa> (mutual TLS)'),
    'source-namespace': stringFlag('source namespace (identity spiffe://<trust domain>/ns/<ns>/sa/default)'),
    'source-ip': stringFlag('source address (default 127.0.0.1, or the --from pod)'),
    token: stringFlag('a JWT, sent as Authorization: Bearer and verified against the key sets the config names'),
    jwks: stringFlag('verify tokens with this JSON Web Key Set file instead of fetching the key sets'),
    claims: stringFlag('token claims as JSON, signed by the simulator (the answer says UNVERIFIED)'),
    issuer: stringFlag('issuer of --claims'),
    requests: stringFlag('YAML list of requests (fields as the flags, plus name and expect); prints a table, exits 1 when an expectation fails'),
    output: stringFlag('output format', { char: 'o', options: ['short', 'json', 'yaml'], default: 'short' }),
  },
})
export class ExperimentalAuthzSimulate extends MeshCommand {
  @inject(KindRegistryToken) private readonly kinds!: KindRegistry;
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags: parsed } = await this.parse(ExperimentalAuthzSimulate);
    const flags = parsed as unknown as Flags;
    const base = this.baseRequest(flags);
    const entries = flags.requests ? readRequestsFile(flags.requests) : undefined;
    const requests = entries ? entries.map((e, i) => requestFromEntry(e, base, `${flags.requests}[${i}]`)) : [checkRequest(base, 'request')];
    const where = (i: number) => (entries ? `${flags.requests}[${i}]` : 'request');
    const files = (flags.filename ?? []).filter((f) => f !== '');
    const fileResources = files.length ? await readConfigFiles(files, this.kinds, this.limits()) : [];
    // A mesh config of this command's own: the cluster's is set on it quietly (no "changed" log line).
    const simulator = this.scope.resolve(AuthzSimulator, [[MeshConfig, new MeshConfig()]]);
    const simulate = async (config: ConfigSnapshot, workloads: Workloads) => {
      const claimIssuers = new Set(requests.filter((r) => r.claims).map((r) => r.issuer ?? String(r.claims!.iss)));
      const signer = claimIssuers.size ? await ClaimsSigner.create() : undefined;
      const logger = { info: () => undefined, warn: (m: string) => this.warn(m), error: (m: string) => this.warn(m) };
      const jwks = flags.jwks !== undefined ? readJwks(flags.jwks) : undefined;
      const keyed = await withKeySets(config, { jwks, signer: signer && { key: signer, issuers: claimIssuers }, logger });
      return simulator.run({ config: keyed, workloads, signer }, requests, where);
    };
    const namespace = flags.namespace || '';
    const results =
      files.length > 0 && !flags.cluster
        ? await simulate(overlay(new Map(), fileResources), new FileWorkloads(overlay(new Map(), fileResources), namespace || 'default'))
        : await withOrchAccess(this.scope, flags, async (access) => {
            const live = await this.readCluster(access, flags, simulator);
            return simulate(overlay(live, fileResources), new ClusterWorkloads(access, access.namespace(namespace || undefined)));
          }, 'reading the mesh config and policies through the orchestrator API');
    const format = flags.output as OutputFormat;
    if (entries) {
      this.write(formatMatrix(results, format));
      if (results.some((s) => meetsExpectation(s) === false)) this.fail(`${results.filter((s) => meetsExpectation(s) === false).length} of ${results.length} requests did not get the expected answer`);
      return;
    }
    const [only] = results;
    this.write(formatOne(only, format));
    const { answer } = only;
    if (answer.decision !== 'allowed') this.fail(`the request would not be let through: ${answer.status ?? 'connection closed'} ${answer.decision}`);
  }

  /** Flag parse errors are usage errors: exit 2, as every other misuse of this command. */
  override async catch(err: Error & { exitCode?: number; parse?: unknown; oclif?: { exit?: number } }): Promise<never> {
    if (err.parse !== undefined || err.oclif?.exit === 2) {
      throw usage(err.message.split('\n').filter((l) => l.trim() !== '' && !/See more help with/.test(l)).join('; '));
    }
    throw err;
  }

  /** The request the flags describe; a requests file's entries start from it. */
  private baseRequest(flags: Flags): SimRequest {
    return {
      to: { name: flags.to, labels: flags['to-labels'] !== undefined ? parseLabels(flags['to-labels'], '--to-labels') : undefined, namespace: flags.namespace || undefined },
      port: flags.port !== undefined ? portOf(flags.port, '--port') : undefined,
      method: flags.method.toUpperCase(),
      path: flags.path,
      host: flags.host,
      headers: parseHeaders(flags.header ?? [], '--header'),
      from: flags.from,
      principal: flags.principal,
      sourceNamespace: flags['source-namespace'],
      sourceIp: flags['source-ip'],
      token: flags.token,
      claims: flags.claims !== undefined ? parseClaims(flags.claims, '--claims') : undefined,
      issuer: flags.issuer,
    };
  }

  /** The cluster's mesh config (given to the simulator) and its mesh resources, validated as the daemon validates them. */
  private async readCluster(access: OrchAccess, flags: Flags, simulator: AuthzSimulator): Promise<ConfigSnapshot> {
    const cm = await getObject<{ data?: Record<string, string> }>(access.client, CONFIG_MAPS, flags.meshNamespace, MESH_CONFIG_MAP);
    if (cm?.data?.mesh) simulator.useMeshConfig(cm.data.mesh, `ConfigMap ${flags.meshNamespace}/${MESH_CONFIG_MAP} key mesh`);
    const namespace = access.namespace(flags.namespace || undefined);
    const state = await readMeshState(access.client, this.kinds, { meshNamespace: flags.meshNamespace, revision: '', fallbackNamespaces: [namespace] });
    for (const rejected of state.rejected) this.warn(`left out, the daemon would refuse it: ${rejected}`);
    return state.config as ConfigSnapshot;
  }

  private limits() {
    try {
      return configFileLimits(this.settings);
    } catch (err) {
      if (err instanceof ConfigLimitSettingError) this.fail(err.message);
      throw err;
    }
  }

  override warn(message: string): string {
    process.stderr.write(`warning: ${message}\n`);
    return message;
  }
}

function readSmallFile(file: string, flag: string, max: number): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    throw usage(`${flag} ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  if (!stat.isFile()) throw usage(`${flag} ${file}: not a regular file`);
  if (stat.size > max) throw usage(`${flag} ${file}: ${stat.size} bytes, more than the ${max} read`);
  return fs.readFileSync(file, 'utf8');
}

function readJwks(file: string): string {
  return readSmallFile(file, '--jwks', 1024 * 1024);
}

/** The requests file: a YAML list (aliases refused: a small file must not expand to a huge one). */
function readRequestsFile(file: string): unknown[] {
  const text = readSmallFile(file, '--requests', MAX_REQUESTS_FILE_BYTES);
  let value: unknown;
  try {
    value = parseYaml(text, { maxAliasCount: 0 });
  } catch (err) {
    throw usage(`--requests ${file}: not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(value)) throw usage(`--requests ${file}: expected a YAML list of requests`);
  if (value.length === 0) throw usage(`--requests ${file}: the list is empty`);
  if (value.length > MAX_REQUESTS) throw usage(`--requests ${file}: ${value.length} requests, more than ${MAX_REQUESTS}`);
  return value;
}

