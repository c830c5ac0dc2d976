import { expect } from 'chai';
import { Profile } from 'pprof-format';
import { cpuProfileToPprof, heapProfileToPprof, V8CallFrame } from '../../../src/modules/ctrlz/pprof/convert';

const frame = (functionName: string, url = 'file:///app/main.js', lineNumber = 0): V8CallFrame => ({ functionName, scriptId: url, url, lineNumber, columnNumber: 4 });

/** Decoded again, each sample as `leaf<-...<-root` names with its values. */
function samples(profile: Profile): Array<[string, number[]]> {
  const decoded = Profile.decode(profile.encode());
  const s = decoded.stringTable.strings;
  const fns = new Map(decoded.function.map((f) => [Number(f.id), f]));
  const locs = new Map(decoded.location.map((l) => [Number(l.id), l]));
  return decoded.sample
    .map((x): [string, number[]] => [x.locationId.map((id) => s[Number(fns.get(Number(locs.get(Number(id))!.line[0].functionId))!.name)]).join('<-'), x.value.map(Number)])
    .sort(([a], [b]) => a.localeCompare(b));
}

describe('V8 profiles to pprof', () => {
  it('a CPU profile: one sample per stack on top, ticks and measured time, root left out', () => {
    const profile = cpuProfileToPprof(
      {
        nodes: [
          { id: 1, callFrame: frame('(root)', ''), children: [2] },
          { id: 2, callFrame: frame('main', 'file:///app/main.js', 9), children: [3, 4] },
          { id: 3, callFrame: frame('', 'file:///app/main.js', 20) },
          { id: 4, callFrame: frame('parse', 'node:internal/json') },
        ],
        startTime: 1000,
        endTime: 5000,
        samples: [3, 3, 4, 2],
        timeDeltas: [0, 1000, 1000, 1000],
      },
      1000,
      '/app/bin/daemon',
    );
    expect(samples(profile)).to.deep.equal([
      ['(anonymous)<-main', [2, 2_000_000]],
      ['main', [1, 1_000_000]],
      ['parse<-main', [1, 1_000_000]],
    ]);
    const decoded = Profile.decode(profile.encode());
    const s = decoded.stringTable.strings;
    expect(Number(decoded.durationNanos)).to.equal(4_000_000);
    expect(Number(decoded.period)).to.equal(1_000_000);
    expect(s[Number(decoded.mapping[0].filename)]).to.equal('/app/bin/daemon');
    // Files as paths, lines 1-based.
    const main = decoded.function.find((f) => s[Number(f.name)] === 'main')!;
    expect(s[Number(main.filename)]).to.equal('/app/main.js');
    const mainLoc = decoded.location.find((l) => Number(l.line[0].functionId) === Number(main.id))!;
    expect(Number(mainLoc.line[0].line)).to.equal(10);
  });

  it('a heap profile: live bytes per allocating stack, objects scaled like the bytes', () => {
    const profile = heapProfileToPprof(
      {
        head: {
          callFrame: frame('(root)', ''),
          selfSize: 0,
          id: 1,
          children: [
            { callFrame: frame('load'), selfSize: 4096, id: 2, children: [{ callFrame: frame('decode'), selfSize: 1000, id: 3, children: [] }] },
            { callFrame: frame('idle'), selfSize: 0, id: 4, children: [] },
          ],
        },
        // load's 2 sampled objects of 1 KiB stand for its 4 KiB: 4 objects; decode has no sample list: bytes / interval.
        samples: [
          { size: 1024, nodeId: 2 },
          { size: 1024, nodeId: 2 },
        ],
      },
      512,
      'daemon',
    );
    expect(samples(profile)).to.deep.equal([
      ['decode<-load', [2, 1000]],
      ['load', [4, 4096]],
    ]);
  });
});
