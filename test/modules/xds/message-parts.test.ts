import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { adsService } from '../../../src/modules/xds/ads-service';
import { deltaDiscoveryResponseParts, encodeDeltaDiscoveryResponse, MessageParts } from '../../../src/modules/envoy/wire';

/**
 * ADS responses are handed to grpc-js in pieces (MessageParts) and copied once, into the
 * message frame. What arrives must be exactly the concatenated message.
 */
describe('xDS responses written in pieces', () => {
  const pieces = [randomBytes(5), Buffer.alloc(0), randomBytes(3 * 1024 * 1024), randomBytes(17)];

  it('copies like Buffer.copy of the concatenated message, and refuses a target it does not fit', () => {
    const message = new MessageParts(pieces);
    const whole = Buffer.concat(pieces);
    expect(message.length).to.equal(whole.length);
    expect(message.toBuffer().equals(whole)).to.equal(true);
    const target = Buffer.alloc(whole.length + 9, 0xee);
    expect(message.copy(target, 5)).to.equal(whole.length);
    expect(target.subarray(5, 5 + whole.length).equals(whole)).to.equal(true);
    expect([...target.subarray(0, 5), ...target.subarray(5 + whole.length)]).to.deep.equal(new Array(9).fill(0xee));
    expect(() => message.copy(Buffer.alloc(whole.length), 1)).to.throw(RangeError, /does not fit/);
  });

  it('encodes a delta response in pieces byte for byte as in one buffer', () => {
    const resources = [
      { name: 'a', version: '1', body: randomBytes(100) },
      { name: 'b', version: '2', body: randomBytes(70_000) },
    ];
    const flat = encodeDeltaDiscoveryResponse('type.googleapis.com/x', 'v1', 'n1', resources, ['gone'], 'cp');
    expect(deltaDiscoveryResponseParts('type.googleapis.com/x', 'v1', 'n1', resources, ['gone'], 'cp').toBuffer().equals(flat)).to.equal(true);
    const runs = [Object.freeze([resources[0]]), Object.freeze([resources[1]])];
    expect(deltaDiscoveryResponseParts('type.googleapis.com/x', 'v1', 'n1', resources, ['gone'], 'cp', runs).toBuffer().equals(flat)).to.equal(true);
  });

  it('arrives through a real gRPC stream as exactly the concatenated bytes', async () => {
    const server = new grpc.Server();
    const { methods, handlers } = adsService(true, (call) => {
      call.on('data', () => undefined);
      call.write(new MessageParts(pieces), () => call.write(Buffer.from('one buffer'), () => call.end()));
    });
    server.addService(methods, handlers);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const received = await new Promise<Buffer[]>((resolve, reject) => {
        const got: Buffer[] = [];
        const call = client.makeBidiStreamRequest(methods.DeltaAggregatedResources.path, (b: Buffer) => b, (b: Buffer) => b);
        call.on('data', (b: Buffer) => got.push(b));
        call.on('error', reject);
        call.on('end', () => resolve(got));
        call.write(Buffer.alloc(0));
        call.end();
      });
      expect(received).to.have.length(2);
      expect(received[0].equals(Buffer.concat(pieces))).to.equal(true, 'the pieces arrive as one message, in order');
      expect(received[1].toString()).to.equal('one buffer');
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
