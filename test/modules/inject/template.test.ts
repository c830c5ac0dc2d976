import { expect } from 'chai';
import { BUILTINS, dynamicFromJSON, GoStruct, SPRIG, T, Template, TemplateError } from '../../../src/modules/inject/template';
import { templateFuncs } from '../../../src/modules/inject/funcs';
import { CONTAINER_PORT, OBJECT_META } from '../../../src/modules/inject/go-types';

const funcs = new Map([...BUILTINS, ...SPRIG]);
const render = (text: string, data: unknown = undefined) => Template.parse('t', text, funcs).execute(data);
const data = dynamicFromJSON({ a: 1, s: 'x', m: { b: 2, a: 1, c: { d: [1, 2] } }, n: null, big: 1000000, list: ['p', 'q'] });

describe('inject template engine: Go text/template semantics', () => {
  it('trims white space next to {{- and -}}, drops comments', () => {
    expect(render('a  \n {{- "b" -}} \n  c')).to.equal('abc');
    expect(render('a {{/* note */}} b')).to.equal('a  b');
    expect(render('a \n{{- /* note */ -}}\n b')).to.equal('ab');
    // A minus glued to a number is a negative number, not a trim marker.
    expect(render('{{-3}}')).to.equal('-3');
  });

  it('ranges over maps in key order, with $i, $v and else', () => {
    expect(render('{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}', data)).to.equal('a=1;b=2;c=map[d:[1 2]];');
    expect(render('{{ range $i, $v := .list }}{{ $i }}:{{ $v }} {{ end }}', data)).to.equal('0:p 1:q ');
    expect(render('{{ range .missing }}x{{ else }}none{{ end }}', data)).to.equal('none');
    expect(render('{{ range $v := .list }}{{ if eq $v "q" }}{{ break }}{{ end }}{{ $v }}{{ end }}', data)).to.equal('p');
  });

  it('prints nil and missing values as Go does', () => {
    expect(render('{{ .missing }}|{{ .n }}|{{ printf "%v" .missing }}|{{ print nil }}', data)).to.equal('<no value>|<no value>|<nil>|<nil>');
    expect(render('{{ .missing.deeper }}', data)).to.equal('<no value>');
    expect(() => render('{{ .n.x }}', data)).to.throw(TemplateError, /nil pointer evaluating interface \{\}\.x/);
  });

  it('prints float64 like fmt (%v uses %e from exponent 6 on)', () => {
    expect(render('{{ .a }} {{ .big }} {{ 1.5 }}', data)).to.equal('1 1e+06 1.5');
  });

  it('implements printf verbs, width and flags', () => {
    expect(render('{{ printf "%d|%5d|%-4s|%05.1f|%q|%x|%t|%v|%T" 42 7 "ab" 3.14159 "q\\"" 255 true .list .a }}', data)).to.equal(
      '42|    7|ab  |003.1|"q\\""|ff|true|[p q]|float64',
    );
    expect(render('{{ printf "%d" "x" }}')).to.equal('%!d(string=x)');
    expect(render('{{ printf "%s %s" "one" }}')).to.equal('one %!s(MISSING)');
  });

  it('short-circuits and/or, and compares like Go', () => {
    expect(render('{{ or .missing "dflt" }} {{ and .a .s }} {{ and .missing (index .nothing 1) }}', data)).to.equal('dflt x <no value>');
    expect(render('{{ eq .s "x" }} {{ ne .s "y" }} {{ lt 1 2 }} {{ ge "b" "a" }} {{ eq .missing true }}', data)).to.equal('true true true true false');
    // A float64 from data against an int constant: Go refuses.
    expect(() => render('{{ eq .a 1 }}', data)).to.throw(TemplateError, /incompatible types for comparison/);
  });

  it('has variables, $, with/else with, define/template/block', () => {
    expect(render('{{ $x := "a" }}{{ with .s }}{{ $x = . }}{{ end }}{{ $x }} {{ $.s }}', data)).to.equal('x x');
    expect(render('{{ with .missing }}y{{ else with .s }}{{ . }}{{ end }}', data)).to.equal('x');
    expect(render('{{ define "d" }}[{{ . }}]{{ end }}{{ template "d" .s }}{{ block "b" .a }}<{{ . }}>{{ end }}', data)).to.equal('[x]<1>');
  });

  it('reads struct fields by Go name with zero values, maps by key', () => {
    const meta = new GoStruct(OBJECT_META, { name: 'p', labels: { app: 'a' } });
    const port = new GoStruct(CONTAINER_PORT, { containerPort: 80, name: 'http' });
    const d = new GoStruct(T.struct({ name: 'D', fields: [{ go: 'Meta', json: 'meta', type: OBJECT_META }, { go: 'Port', json: 'port', type: CONTAINER_PORT }] }), { meta: meta.data, port: port.data });
    const f = templateFuncs(() => undefined);
    const run = (text: string) => Template.parse('t', text, f).execute(d);
    expect(run('{{ .Meta.Name }}|{{ .Meta.Namespace }}|{{ index .Meta.Labels "app" }}|{{ index .Meta.Annotations "x" }}|{{ .Meta.Labels.none }}')).to.equal('p||a||<no value>');
    expect(run('{{ structToJSON .Port }}')).to.equal('{"name":"http","containerPort":80}');
    expect(() => run('{{ .Meta.Nope }}')).to.throw(TemplateError, /can't evaluate field Nope in type v1.ObjectMeta/);
  });

  it('applies sprig semantics (default, quote, trunc, list/append, join, dict)', () => {
    expect(render('{{ .missing | default "d" }} {{ 0 | default 5 }} {{ "" | default "e" }} {{ .s | quote }} {{ trunc 2 "abcd" }}', data)).to.equal('d 5 e "x" ab');
    expect(render('{{ $l := list }}{{ $l = append $l "a" }}{{ $l = append $l "b" }}{{ join "," $l }} {{ len $l }}')).to.equal('a,b 2');
    expect(render('{{ $d := dict "k" "v" }}{{ $d.k }} {{ hasKey $d "k" }} {{ trimAll "-_" "--ab_" }}')).to.equal('v true ab');
  });

  it('checks function arguments at parse and execution time, naming the template and line', () => {
    expect(() => Template.parse('named', 'line one\n{{ nosuchfunc }}', funcs)).to.throw(TemplateError, /^template: named:2: function "nosuchfunc" not defined/);
    expect(() => Template.parse('named', '{{ $undeclared }}', funcs)).to.throw(TemplateError, /undefined variable "\$undeclared"/);
    expect(() => Template.parse('named', '{{ if .a }}', funcs)).to.throw(TemplateError, /unexpected EOF/);
    expect(() => render('\n\n{{ trunc .s "abc" }}', data)).to.throw(TemplateError, /^template: t:3: wrong type for value; expected int; got string/);
  });

  it('stops runaway templates with an error instead of hanging', () => {
    const t = Template.parse('loop', '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}', funcs);
    expect(() => t.execute(null)).to.throw(TemplateError, /maximum template depth/);
    const big = Template.parse('big', '{{ range 100000000 }}x{{ end }}', funcs);
    expect(() => big.execute(null, { maxOutput: 1000, maxSteps: 1_000_000, maxDepth: 10 })).to.throw(TemplateError, /output larger than 1000/);
  });
});
