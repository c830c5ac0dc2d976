import { expect } from 'chai';
import { escapeFieldValue, parseFieldSelector, parseLabelSelector, parsePodFieldSelector, SelectorError } from '../../../../src/modules/cni/repair';

describe('repair: selector parsing', () => {
  describe('field selectors', () => {
    it('reads =, == and != terms joined by commas', () => {
      expect(parseFieldSelector('spec.nodeName=n1,status.phase!=Failed,metadata.name==a')).to.deep.equal([
        { field: 'spec.nodeName', operator: '=', value: 'n1' },
        { field: 'status.phase', operator: '!=', value: 'Failed' },
        { field: 'metadata.name', operator: '==', value: 'a' },
      ]);
    });

    it('is empty for an empty string and skips empty terms, as the API server does', () => {
      expect(parseFieldSelector('')).to.deep.equal([]);
      expect(parseFieldSelector('a=b,')).to.deep.equal([{ field: 'a', operator: '=', value: 'b' }]);
    });

    it('takes escaped commas, equals signs and backslashes in values', () => {
      expect(parseFieldSelector('metadata.name=a\\,b\\=c\\\\d,status.phase=x')).to.deep.equal([
        { field: 'metadata.name', operator: '=', value: 'a,b=c\\d' },
        { field: 'status.phase', operator: '=', value: 'x' },
      ]);
      expect(escapeFieldValue('a,b=c\\d')).to.equal('a\\,b\\=c\\\\d');
      expect(parseFieldSelector(`metadata.name=${escapeFieldValue('x,=\\')}`)[0].value).to.equal('x,=\\');
    });

    it('rejects terms without an operator or field, and unknown escapes', () => {
      expect(() => parseFieldSelector('spec.nodeName')).to.throw(SelectorError, 'term "spec.nodeName" has no operator');
      expect(() => parseFieldSelector('=x')).to.throw(SelectorError, 'has no field name');
      expect(() => parseFieldSelector('metadata.name=a\\b')).to.throw(SelectorError, 'invalid escape sequence');
    });

    it('for pods, accepts only the fields the API server selects pods by', () => {
      expect(parsePodFieldSelector('status.phase=Running,spec.nodeName=n')).to.have.length(2);
      expect(() => parsePodFieldSelector('spec.color=red')).to.throw(SelectorError, 'field "spec.color" cannot select pods');
    });
  });

  describe('label selectors', () => {
    it('reads every operator', () => {
      expect(parseLabelSelector('a=1, b==2, c!=3, d in (x, y), e notin (z), f, !g, h>4, i<5')).to.deep.equal([
        { key: 'a', operator: '=', values: ['1'] },
        { key: 'b', operator: '=', values: ['2'] },
        { key: 'c', operator: '!=', values: ['3'] },
        { key: 'd', operator: 'in', values: ['x', 'y'] },
        { key: 'e', operator: 'notin', values: ['z'] },
        { key: 'f', operator: 'exists', values: [] },
        { key: 'g', operator: '!', values: [] },
        { key: 'h', operator: '>', values: ['4'] },
        { key: 'i', operator: '<', values: ['5'] },
      ]);
    });

    it('takes prefixed keys and the empty value', () => {
      expect(parseLabelSelector('cni.mesh.io/uninitialized=')).to.deep.equal([{ key: 'cni.mesh.io/uninitialized', operator: '=', values: [''] }]);
      expect(parseLabelSelector('')).to.deep.equal([]);
    });

    const bad: [string, string][] = [
      ['a in (x', 'expected "," or ")"'],
      ['a in ()', 'needs at least one value'],
      ['a in x', 'needs a parenthesised list'],
      ['a b', 'expected an operator'],
      ['a=b c', 'expected "," or the end'],
      ['a=b,', 'expected a label key, found the end'],
      ['Bad_Prefix/x=1', 'prefix "Bad_Prefix" is not a lower-case DNS subdomain'],
      ['a=-x', 'label value "-x" is invalid'],
      ['a>x', 'needs an integer'],
      [`k=${'v'.repeat(64)}`, 'at most 63 characters'],
    ];
    for (const [text, message] of bad) {
      it(`rejects ${JSON.stringify(text)}`, () => {
        expect(() => parseLabelSelector(text)).to.throw(SelectorError, message);
      });
    }
  });
});
