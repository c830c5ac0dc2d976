import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../../helpers/run-cli';

describe('envoy: the xDS message protos', () => {
  it('are loaded and their coders built by prepareXdsMessages, which a server calls before taking streams', () => {
    // A fresh process: this one has loaded the protos long ago.
    const protos = path.join(REPO_ROOT, 'dist', 'src', 'modules', 'envoy', 'protos.js');
    const script = `
      const p = require(${JSON.stringify(protos)});
      const before = p.envoyProtosLoaded();
      p.prepareXdsMessages();
      const cluster = p.messageType('type.googleapis.com/envoy.config.cluster.v3.Cluster');
      console.log(JSON.stringify({ before, after: p.envoyProtosLoaded(), built: Object.prototype.hasOwnProperty.call(cluster, 'encode') }));`;
    expect(JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))).to.deep.equal({ before: false, after: true, built: true });
  });
});
