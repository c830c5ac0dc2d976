import { expect } from 'chai';
import { compileUriTemplate } from '../../../../src/modules/proxy/filters/matchers/uri-template';

describe('URI templates (Envoy uri_template path matching)', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['/path/template/*', ['/path/template/a', '/path/template/a-b.c~d'], ['/path/template/', '/path/template/a/b', '/path/template']],
    ['/**/path/template', ['/a/path/template', '/a/b/c/path/template'], ['/path/template', '/a/path/template/x']],
    ['/books/{id}/pages/{page=**}', ['/books/1/pages/', '/books/1/pages/2/3'], ['/books//pages/2', '/books/1/2/pages/3']],
    ['/v1/{name=shelves/*}/books', ['/v1/shelves/s1/books'], ['/v1/s1/books', '/v1/shelves/s1/x/books']],
    ['/img/*.png', ['/img/cat.png'], ['/img/cat.jpg', '/img/a/cat.png']],
    ['/exact/', ['/exact/'], ['/exact', '/exact/x']],
    ['/a+b$(c)', ['/a+b$(c)'], ['/aab$(c)', '/a+b']],
  ];
  for (const [template, yes, no] of cases) {
    it(template, () => {
      const regex = compileUriTemplate(template, 'f');
      for (const p of yes) expect(regex.test(p), `${p} should match`).to.equal(true);
      for (const p of no) expect(regex.test(p), `${p} should not match`).to.equal(false);
    });
  }

  const invalid: Array<[string, RegExp]> = [
    ['no/leading/slash', /must start with "\/"/],
    ['/a/**/b/*', /no glob may follow "\*\*"/],
    ['/a/**/{x}', /no glob may follow "\*\*"/],
    ['/{x}/{x}', /repeated variable name "x"/],
    ['/{1x}', /invalid variable name "1x"/],
    ['/a/{x', /unmatched "\{"/],
    ['/a/b c', /must start with "\/" and hold only printable/],
    ['/*.x/y', /a suffix may not contain "\/"/],
    ['/a*b', /invalid literal "a\*b"/],
  ];
  for (const [template, message] of invalid) {
    it(`refuses ${template}`, () => {
      const attempt = () => compileUriTemplate(template, 'field.path_template');
      expect(attempt).to.throw(/^field\.path_template: path template/);
      expect(attempt).to.throw(message);
    });
  }
});
