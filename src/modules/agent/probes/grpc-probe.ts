/**
 * A grpc probe of the application: the standard health check
 * `grpc.health.v1.Health/Check { service }` over plaintext, as the kubelet sends it; only
 * SERVING is a success.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';
import { protobufLibrary } from '../../shared/protobuf-library';
import { GrpcAction } from './app-probers';
import { hostPort, ProbeOutcome } from './outcome';

export const HEALTH_CHECK_METHOD = '/grpc.health.v1.Health/Check';

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

/** HealthCheckRequest { string service = 1; } */
export function encodeHealthCheckRequest(service: string): Buffer {
  const writer = protobufLibrary().Writer.create();
  if (service) writer.uint32((1 << 3) | 2).string(service);
  return Buffer.from(writer.finish());
}

/** HealthCheckResponse { ServingStatus status = 1; } → the status number (0 when absent). */
export function decodeHealthCheckStatus(bytes: Uint8Array): number {
  const reader = protobufLibrary().Reader.create(bytes);
  let status = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === (1 << 3)) status = reader.int32();
    else reader.skipType(tag & 7);
  }
  return status;
}

export function probeGrpc(action: GrpcAction, host: string, timeoutMs: number, userAgent?: string): Promise<ProbeOutcome> {
  const target = hostPort(host, action.port);
  const options: grpc.ClientOptions = userAgent ? { 'grpc.primary_user_agent': userAgent } : {};
  const client = new (grpcLibrary().Client)(target, grpcLibrary().credentials.createInsecure(), options);
  const what = `gRPC health check of ${target}${action.service ? ` (service ${JSON.stringify(action.service)})` : ''}`;
  return new Promise<ProbeOutcome>((resolve) => {
    client.makeUnaryRequest(
      HEALTH_CHECK_METHOD,
      (service: string) => encodeHealthCheckRequest(service),
      (bytes: Buffer) => decodeHealthCheckStatus(bytes),
      action.service,
      new (grpcLibrary().Metadata)(),
      { deadline: Date.now() + timeoutMs },
      (err, status) => {
        if (err) {
          const why = err.code === grpcLibrary().status.UNIMPLEMENTED ? 'the server does not implement grpc.health.v1.Health' : err.code === grpcLibrary().status.DEADLINE_EXCEEDED ? `no answer within ${timeoutMs}ms` : err.details || err.message;
          resolve({ status: 500, detail: `${what} failed: ${why}` });
          return;
        }
        const name = SERVING_STATUS[status ?? 0] ?? `status ${status}`;
        resolve({ status: name === 'SERVING' ? 200 : 500, detail: `${what}: ${name}` });
      },
    );
  }).finally(() => client.close());
}
