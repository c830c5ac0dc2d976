import { expect } from 'chai';
import { createContainer } from '../../../../src/container';
import { MeshConfigFileToken } from '../../../../src/modules/mesh-config';
import { MtlsOptions, MtlsOptionsToken } from '../../../../src/modules/security/mtls';
import { REPO_ROOT } from '../../../helpers/run-cli';

/** The daemon's mesh mTLS options as the container composes them for `env` (no mesh config file). */
function mtlsOptions(env: Record<string, string>): MtlsOptions {
  const { container } = createContainer({ program: 'pilot-discovery', env, cwd: REPO_ROOT });
  const scope = container.createChild();
  scope.bind(MeshConfigFileToken).toConstantValue('/nonexistent/mesh');
  return scope.get<MtlsOptions>(MtlsOptionsToken);
}

describe('mesh mTLS: ALPN protocols plugins offer (MeshTlsAlpnContributor)', () => {
  it('metadata exchange offers mesh-peer-exchange while on', () => {
    expect(mtlsOptions({}).leadingAlpns).to.deep.equal(['mesh-peer-exchange']);
  });

  it('PILOT_DISABLE_MX_ALPN keeps the exchange but stops offering its ALPN', () => {
    expect(mtlsOptions({ PILOT_DISABLE_MX_ALPN: 'true' }).leadingAlpns).to.deep.equal([]);
  });

  it('nothing is offered with metadata exchange off', () => {
    expect(mtlsOptions({ PILOT_ENABLE_METADATA_EXCHANGE: 'false' }).leadingAlpns).to.deep.equal([]);
  });
});
