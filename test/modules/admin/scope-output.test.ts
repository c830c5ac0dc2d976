import { expect } from 'chai';
import { parse } from 'yaml';
import { renderScopeLevels, scopeRows } from '../../../src/modules/admin';

const scopes = [
  { name: 'default', description: 'messages of no more specific scope', output_level: 'info', stack_trace_level: 'none', log_callers: false },
  { name: 'ads', description: 'xDS streams', output_level: 'debug', stack_trace_level: 'error', log_callers: false },
];

describe('admin log output', () => {
  it('prints the incumbent table: sorted by scope, columns 3 blanks apart, last column unpadded', () => {
    expect(renderScopeLevels([{ pod: 'meshd-1.mesh-system', rows: scopeRows(scopes) }], 'short')).to.equal(
      [
        'ACTIVE SCOPE   DESCRIPTION                          LOG LEVEL   STACK TRACE LEVEL',
        'ads            xDS streams                          debug       error',
        'default        messages of no more specific scope   info        none',
        '',
      ].join('\n'),
    );
  });

  it('prints JSON and YAML as data with the incumbent field names; several daemons keyed by pod', () => {
    const one = JSON.parse(renderScopeLevels([{ pod: 'meshd-1.mesh-system', rows: scopeRows(scopes) }], 'json'));
    expect(one[0]).to.deep.equal({ scope_name: 'ads', log_level: 'debug', stack_trace_level: 'error', description: 'xDS streams' });
    const two = parse(
      renderScopeLevels(
        [
          { pod: 'meshd-1.mesh-system', rows: scopeRows(scopes) },
          { pod: 'meshd-2.mesh-system', rows: scopeRows(scopes.slice(1)) },
        ],
        'yaml',
      ),
    );
    expect(Object.keys(two)).to.deep.equal(['meshd-1.mesh-system', 'meshd-2.mesh-system']);
    expect(two['meshd-2.mesh-system']).to.have.length(1);
    const short = renderScopeLevels(
      [
        { pod: 'meshd-1.mesh-system', rows: scopeRows(scopes) },
        { pod: 'meshd-2.mesh-system', rows: scopeRows(scopes) },
      ],
      'short',
    );
    expect(short.match(/^meshd-\d\.mesh-system:\nACTIVE SCOPE/gm)).to.have.length(2);
  });
});
