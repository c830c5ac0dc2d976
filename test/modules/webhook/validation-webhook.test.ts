import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { admissionReview, postAdmission } from '../../helpers/admission';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';

const validPolicy = {
  apiVersion: 'security.mesh.io/v1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'allow-get', namespace: 'shop', uid: 'b3c1', resourceVersion: '12', creationTimestamp: '2024-01-01T00:00:00Z', managedFields: [] },
  spec: { selector: { matchLabels: { app: 'web' } }, action: 'ALLOW', rules: [{ to: [{ operation: { methods: ['GET'] } }] }] },
};

const invalidPolicy = {
  apiVersion: 'security.mesh.io/v1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'bad', namespace: 'shop' },
  spec: { action: 'MAYBE', rules: [{ to: [{ operation: { methods: ['GET'] } }] }], colour: 'blue' },
};

describe('validation webhook (/validate on the HTTPS address)', function () {
  this.timeout(30_000);
  let daemon: RunningDaemon;
  let ca: string;

  before(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-validate-'));
    daemon = await startDaemon(['--configDir', dir]);
    ca = daemon.rootCertPem();
    expect(daemon.httpsPort).to.be.greaterThan(0);
  });

  after(async () => {
    await daemon?.stop();
  });

  const post = (body: unknown, pathname = '/validate') => postAdmission(daemon.httpsPort, ca, pathname, JSON.stringify(body));

  it('allows a valid resource and echoes the request uid, in the version asked (v1 and v1beta1)', async () => {
    for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
      const review = admissionReview(validPolicy, { apiVersion });
      const res = await post(review);
      expect(res.status, res.body).to.equal(200);
      expect(res.review!.apiVersion).to.equal(apiVersion);
      expect(res.review!.response.uid).to.equal((review.request as { uid: string }).uid);
      expect(res.review!.response.allowed).to.equal(true);
    }
  });

  it('allows a VirtualService with an unreachable rule, warning about it (kubectl prints admission warnings)', async () => {
    const vs = {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'dup', namespace: 'shop' },
      spec: {
        hosts: ['reviews'],
        http: [
          { match: [{ uri: { prefix: '/a' } }], route: [{ destination: { host: 'reviews' } }] },
          { name: 'second', match: [{ uri: { prefix: '/a' } }], route: [{ destination: { host: 'ratings' } }] },
        ],
      },
    };
    const res = await post(admissionReview(vs));
    const response = res.review!.response as { allowed: boolean; warnings?: string[] };
    expect(response.allowed).to.equal(true);
    expect(response.warnings).to.deep.equal([
      'spec.http[1].match[0]: rule "second" match #0 is not used (duplicate/overlapping match in rule #0)',
      'spec.http[1]: rule "second" not used (all matches used by prior rules)',
    ]);
  });

  it('refuses an invalid resource with the messages meshctl validate gives, naming each field', async () => {
    const res = await post(admissionReview(invalidPolicy));
    expect(res.status).to.equal(200);
    const response = res.review!.response;
    expect(response.allowed).to.equal(false);
    const message = response.status!.message!;
    expect(message).to.match(/^configuration is invalid: /);
    expect(message).to.contain('AuthorizationPolicy shop/bad: spec.action: must be one of the following values: ALLOW, DENY, AUDIT, CUSTOM');
    expect(message).to.contain('AuthorizationPolicy shop/bad: spec.colour: unknown field');
  });

  it('validates every mesh kind: a ServiceEntry with a bad port and a Gateway server without a port are refused', async () => {
    const serviceEntry = {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'ServiceEntry',
      metadata: { name: 'ext', namespace: 'shop' },
      spec: { hosts: ['api.example.com'], ports: [{ number: 70000, name: 'https', protocol: 'HTTPS' }], resolution: 'DNS' },
    };
    const se = await post(admissionReview(serviceEntry));
    expect(se.review!.response.allowed).to.equal(false);
    expect(se.review!.response.status!.message).to.contain('ServiceEntry shop/ext: spec.ports[0].number');
    // The namespace may come only with the request, as for objects created without one.
    const gateway = { apiVersion: 'networking.mesh.io/v1beta1', kind: 'Gateway', metadata: { name: 'gw' }, spec: { servers: [{ hosts: ['*'] }] } };
    const gw = await post(admissionReview(gateway, { namespace: 'edge' }));
    expect(gw.review!.response.allowed).to.equal(false);
    expect(gw.review!.response.status!.message).to.contain('Gateway edge/gw: spec.servers[0].port: required');
  });

  it('allows kinds it does not model, and deletes', async () => {
    const telemetry = { apiVersion: 'telemetry.mesh.io/v1', kind: 'Telemetry', metadata: { name: 't', namespace: 'shop' }, spec: { anything: true } };
    expect((await post(admissionReview(telemetry))).review!.response.allowed).to.equal(true);
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'shop' }, spec: {} };
    expect((await post(admissionReview(deployment))).review!.response.allowed).to.equal(true);
    expect((await post(admissionReview(invalidPolicy, { operation: 'DELETE' }))).review!.response.allowed).to.equal(true);
  });

  it('answers malformed requests with an HTTP error and a message, and keeps serving', async () => {
    const notJson = await postAdmission(daemon.httpsPort, ca, '/validate', '{"apiVersion": ');
    expect(notJson.status).to.equal(400);
    expect(notJson.body).to.match(/could not decode body: not JSON/);

    const wrongType = await postAdmission(daemon.httpsPort, ca, '/validate', JSON.stringify(admissionReview(validPolicy)), { 'content-type': 'text/yaml' });
    expect(wrongType.status).to.equal(415);
    expect(wrongType.body).to.match(/invalid Content-Type "text\/yaml", want `application\/json`/);

    const noRequest = await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(noRequest.status).to.equal(400);
    expect(noRequest.body).to.match(/request is missing/);

    const wrongKind = await post({ apiVersion: 'admission.k8s.io/v1', kind: 'ConfigMap', request: {} });
    expect(wrongKind.status).to.equal(400);
    expect(wrongKind.body).to.match(/kind is "ConfigMap", want "AdmissionReview"/);

    const empty = await postAdmission(daemon.httpsPort, ca, '/validate', '');
    expect(empty.status).to.equal(400);
    expect(empty.body).to.match(/no body found/);

    const huge = await postAdmission(daemon.httpsPort, ca, '/validate', Buffer.alloc(5 * 1024 * 1024, 0x20));
    expect(huge.status).to.equal(400);
    expect(huge.body).to.match(/over the limit of 4194304 bytes/);

    const get = await postAdmission(daemon.httpsPort, ca, '/validate', '', {}, 'GET');
    expect(get.status).to.equal(405);

    // Still serving, and every refusal counted.
    expect((await post(admissionReview(validPolicy))).review!.response.allowed).to.equal(true);
    const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    expect(metricValue(metrics, 'validator_validation_http_error', { status: '400' })).to.equal(5);
    expect(metricValue(metrics, 'validator_validation_http_error', { status: '415' })).to.equal(1);
    expect(metricValue(metrics, 'validator_validation_http_error', { status: '405' })).to.equal(1);
  });

  it('survives hostile bodies: deep nesting in the body and in the spec, huge strings, wrong types', async () => {
    const deepBody = '['.repeat(200_000) + ']'.repeat(200_000);
    const deep = await postAdmission(daemon.httpsPort, ca, '/validate', deepBody);
    expect(deep.status).to.equal(400);
    // Nested as deep as the API server's decoder allows and deeper; written as text (stringify would overflow here).
    const review = JSON.stringify(admissionReview({ ...invalidPolicy, spec: { rules: [{ to: [{ operation: { methods: ['NESTED'] } }] }] } }));
    const nestedText = '{"a":'.repeat(5000) + '"x"' + '}'.repeat(5000);
    const deepSpec = await postAdmission(daemon.httpsPort, ca, '/validate', review.replace('"NESTED"', nestedText));
    expect(deepSpec.status).to.equal(200);
    expect(deepSpec.review!.response.allowed).to.equal(false);
    expect(deepSpec.review!.response.status!.message).to.equal('configuration is invalid: AuthorizationPolicy shop/bad: nested more than 100 levels deep');
    const wrongTypes = await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 7, operation: 'CREATE', kind: {}, resource: {} } });
    expect(wrongTypes.status).to.equal(400);
    expect(wrongTypes.body).to.match(/request.uid is missing/);
    const bigName = await post(admissionReview({ ...validPolicy, metadata: { name: 'x'.repeat(1_000_000), namespace: 'shop' } }));
    expect(bigName.review!.response.allowed).to.equal(false);
    expect(bigName.review!.response.status!.message).to.contain('metadata.name');
    // Still answering.
    expect((await post(admissionReview(validPolicy))).review!.response.allowed).to.equal(true);
  });

  it('counts passed and failed validations with the resource and the reason', async () => {
    const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    expect(metricValue(metrics, 'validator_validation_passed', { group: 'security.mesh.io', resource: 'authorizationpolicies' })).to.be.greaterThan(2);
    expect(metricValue(metrics, 'validator_validation_failed', { reason: 'invalid_resource' })).to.be.greaterThanOrEqual(3);
    expect(metricValue(metrics, 'validator_validation_failed', { reason: 'unsupported_operation' })).to.equal(1);
  });

  it('serves /validate/ with a suffix too, and answers unknown paths 404', async () => {
    expect((await post(admissionReview(invalidPolicy), '/validate/mesh-system')).review!.response.allowed).to.equal(false);
    const missing = await post(admissionReview(validPolicy), '/nothing-here');
    expect(missing.status).to.equal(404);
  });
});
