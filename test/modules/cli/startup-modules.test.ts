import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packagesLoaded, readProbeFile } from '../../helpers/module-probe';
import { runCli } from '../../helpers/run-cli';

const PROBE = path.join(__dirname, '..', '..', 'helpers', 'module-probe.js');
/** Libraries costing hundreds of milliseconds to load, which only commands talking to a cluster or a daemon use. */
const HEAVY = ['@kubernetes/client-node', '@grpc/grpc-js-xds', 'jose', 'protobufjs', 'undici'];

/**
 * Start-up loads what the command uses: a command that talks to nobody must not load the
 * orchestrator client or the xDS library (each program start in the test suite and every
 * operator command would pay for them). Checked on the modules the process loaded, not on
 * time, so a busy machine cannot make it fail.
 */
describe('start-up: modules a command loads', () => {
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'startup-modules-'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function loadedBy(args: string[]): Promise<{ code: number | null; stderr: string; packages: Set<string> }> {
    const file = path.join(dir, `${args.join('_').replace(/[^\w-]/g, '')}.jsonl`);
    const r = await runCli('meshctl', args, { env: { NODE_OPTIONS: `--require ${PROBE}`, MESH_MODULE_PROBE: file, HOME: dir } });
    const records = readProbeFile(file);
    expect(records, `the probe wrote one record for meshctl ${args.join(' ')}`).to.have.length(1);
    return { code: r.code, stderr: r.stderr, packages: packagesLoaded(records[0].modules) };
  }

  it('meshctl version --remote=false loads none of @kubernetes/client-node, @grpc/grpc-js-xds, jose, protobufjs and undici', async () => {
    const r = await loadedBy(['version', '--remote=false']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.packages, 'the probe sees the packages the program does load').to.include('@oclif/core');
    for (const name of HEAVY) expect(r.packages, `loaded ${name}`).not.to.include(name);
  });

  it('the probe sees @kubernetes/client-node once a command looks for the cluster (meshctl version asking the daemons)', async () => {
    // No orchestrator config in HOME: the command fails to find the daemons, after loading the client.
    const r = await loadedBy(['version']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/control plane version/);
    expect(r.packages).to.include('@kubernetes/client-node');
  });
});
