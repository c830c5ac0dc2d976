import * as http2 from 'node:http2';
import { encodeMessage } from '../../src/modules/envoy/protos';
import type { Node } from './ads-client';

const DELTA_REQUEST = 'type.googleapis.com/envoy.service.discovery.v3.DeltaDiscoveryRequest';

/**
 * A delta ADS client that stops reading after a number of responses, as a hung proxy would:
 * on raw HTTP/2, so nothing buffers for it (a gRPC client reads ahead of its consumer), and
 * flow control holds the daemon's writes to it once the window is full.
 */
export class StallingDeltaClient {
  private readonly session: http2.ClientHttp2Session;
  private readonly stream: http2.ClientHttp2Stream;
  private header = Buffer.alloc(0);
  private bodyLeft = 0;
  private received = 0;
  private readonly firstResponses: Promise<void>;

  /** Reads `responses` whole responses, then nothing more. */
  constructor(port: number, node: Node, typeUrl: string, responses: number) {
    this.session = http2.connect(`http://127.0.0.1:${port}`);
    this.session.on('error', () => undefined);
    this.stream = this.session.request({
      ':method': 'POST',
      ':path': '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    this.stream.on('error', () => undefined);
    const metadata: Record<string, object> = {};
    for (const [k, v] of Object.entries(node.metadata ?? {})) metadata[k] = { string_value: v };
    const request = encodeMessage(DELTA_REQUEST, { node: { id: node.id, metadata: { fields: metadata } }, type_url: typeUrl });
    const header = Buffer.alloc(5);
    header.writeUInt32BE(request.length, 1);
    this.stream.write(Buffer.concat([header, request]));
    this.firstResponses = new Promise((resolve) => {
      const onData = (chunk: Buffer): void => {
        // Counts whole gRPC messages (a 5-byte header, then the body) without keeping their bytes.
        let at = 0;
        while (at < chunk.length) {
          if (this.bodyLeft > 0) {
            const taken = Math.min(this.bodyLeft, chunk.length - at);
            this.bodyLeft -= taken;
            at += taken;
            if (this.bodyLeft === 0) this.received += 1;
            continue;
          }
          const taken = Math.min(5 - this.header.length, chunk.length - at);
          this.header = Buffer.concat([this.header, chunk.subarray(at, at + taken)]);
          at += taken;
          if (this.header.length < 5) continue;
          this.bodyLeft = this.header.readUInt32BE(1);
          this.header = Buffer.alloc(0);
          if (this.bodyLeft === 0) this.received += 1;
        }
        if (this.received >= responses) {
          this.stream.off('data', onData);
          this.stream.pause();
          resolve();
        }
      };
      if (responses === 0) {
        this.stream.pause();
        resolve();
      } else this.stream.on('data', onData);
    });
  }

  /** Resolves once the responses it reads have come; from then on it reads nothing. */
  stalled(): Promise<void> {
    return this.firstResponses;
  }

  close(): void {
    this.stream.close();
    this.session.destroy();
  }
}
