import { expect } from 'chai';
import { namespaceMtlsMode, workloadMtls, workloadPortMtlsMode } from '../../../../src/modules/security/mtls';
import { pushOf } from '../../../helpers/push';

/** A PeerAuthentication document; `spec` is its spec as flow YAML. */
function pa(namespace: string, name: string, spec: string): string {
  return `---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${spec}
`;
}

const WORKLOAD = { namespace: 'foo', labels: { app: 'echo', version: 'v1' } };

describe('PeerAuthentication: effective mTLS mode of a workload port', () => {
  it('is PERMISSIVE without any policy', () => {
    const push = pushOf('');
    expect(workloadMtls(push, WORKLOAD)).to.deep.equal({ mode: 'PERMISSIVE', ports: new Map() });
    expect(namespaceMtlsMode(push, 'foo')).to.equal('PERMISSIVE');
  });

  for (const mode of ['STRICT', 'PERMISSIVE', 'DISABLE'] as const) {
    it(`takes ${mode} from the mesh-level policy (root namespace, no selector)`, () => {
      const push = pushOf(pa('mesh-system', 'default', `{ mtls: { mode: ${mode} } }`));
      expect(workloadPortMtlsMode(push, WORKLOAD, 8080)).to.equal(mode);
      expect(workloadPortMtlsMode(push, { namespace: 'bar', labels: {} }, 8080)).to.equal(mode);
      expect(namespaceMtlsMode(push, 'bar')).to.equal(mode);
    });

    it(`takes ${mode} from the namespace-level policy over the mesh-level one, in that namespace only`, () => {
      const other = mode === 'STRICT' ? 'DISABLE' : 'STRICT';
      const push = pushOf(pa('mesh-system', 'default', `{ mtls: { mode: ${other} } }`) + pa('foo', 'default', `{ mtls: { mode: ${mode} } }`));
      expect(workloadPortMtlsMode(push, WORKLOAD, 8080)).to.equal(mode);
      expect(namespaceMtlsMode(push, 'foo')).to.equal(mode);
      expect(workloadPortMtlsMode(push, { namespace: 'bar', labels: {} }, 8080)).to.equal(other);
    });

    it(`takes ${mode} from a workload-level policy selecting the workload, over the namespace-level one`, () => {
      const other = mode === 'STRICT' ? 'DISABLE' : 'STRICT';
      const push = pushOf(
        pa('foo', 'default', `{ mtls: { mode: ${other} } }`) +
          pa('foo', 'echo', `{ selector: { matchLabels: { app: echo } }, mtls: { mode: ${mode} } }`),
      );
      expect(workloadPortMtlsMode(push, WORKLOAD, 8080)).to.equal(mode);
      // Another workload of the namespace keeps the namespace's mode; so does a client's guess.
      expect(workloadPortMtlsMode(push, { namespace: 'foo', labels: { app: 'other' } }, 8080)).to.equal(other);
      expect(namespaceMtlsMode(push, 'foo')).to.equal(other);
    });

    it(`takes ${mode} for one port from portLevelMtls (keyed by the workload's port)`, () => {
      const other = mode === 'STRICT' ? 'DISABLE' : 'STRICT';
      const push = pushOf(pa('foo', 'echo', `{ selector: { matchLabels: { app: echo } }, mtls: { mode: ${other} }, portLevelMtls: { "8080": { mode: ${mode} } } }`));
      expect(workloadPortMtlsMode(push, WORKLOAD, 8080)).to.equal(mode);
      expect(workloadPortMtlsMode(push, WORKLOAD, 9090)).to.equal(other);
    });
  }

  it('lets UNSET (and a missing mtls) inherit from the level above, ports included', () => {
    const push = pushOf(
      pa('mesh-system', 'default', '{ mtls: { mode: STRICT } }') +
        pa('foo', 'default', '{ mtls: { mode: UNSET } }') +
        pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, portLevelMtls: { "8080": { mode: UNSET }, "9090": { mode: DISABLE } } }'),
    );
    expect(workloadMtls(push, WORKLOAD)).to.deep.equal({ mode: 'STRICT', ports: new Map([[8080, 'STRICT'], [9090, 'DISABLE']]) });
    expect(namespaceMtlsMode(push, 'foo')).to.equal('STRICT');
  });

  it('ignores root-namespace policies with a selector, and workload policies not selecting the workload', () => {
    const push = pushOf(
      pa('mesh-system', 'selective', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: DISABLE } }') +
        pa('foo', 'other', '{ selector: { matchLabels: { app: other } }, mtls: { mode: STRICT } }'),
    );
    expect(workloadPortMtlsMode(push, WORKLOAD, 8080)).to.equal('PERMISSIVE');
  });

  it('takes the first policy by name when several compete for one level (files carry no creation time)', () => {
    const push = pushOf(
      pa('foo', 'b-second', '{ mtls: { mode: DISABLE } }') +
        pa('foo', 'a-first', '{ mtls: { mode: STRICT } }') +
        pa('foo', 'w-b', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: PERMISSIVE } }') +
        pa('foo', 'w-a', '{ selector: { matchLabels: { version: v1 } }, portLevelMtls: { "8080": { mode: DISABLE } } }'),
    );
    // w-a wins the workload level: it leaves the workload's mode to the namespace (a-first) and sets port 8080.
    expect(workloadMtls(push, WORKLOAD)).to.deep.equal({ mode: 'STRICT', ports: new Map([[8080, 'DISABLE']]) });
    expect(namespaceMtlsMode(push, 'foo')).to.equal('STRICT');
  });
});
