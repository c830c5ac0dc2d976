import * as zlib from 'node:zlib';

/** One file of an archive: its path inside (with `/`), its bytes and time. */
export interface TarEntry {
  path: string;
  data: Buffer;
  mtime?: Date;
}

const BLOCK = 512;

/**
 * A gzip'd ustar archive of `entries`, directories implied by the paths (tar and every reader
 * create them). Written here rather than with a package: the project has no tar dependency, and
 * regular files in ustar need only a 512-byte header each.
 */
export function tarGz(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    blocks.push(header(e));
    blocks.push(e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) blocks.push(Buffer.alloc(pad));
  }
  blocks.push(Buffer.alloc(BLOCK * 2)); // end of archive: two zero blocks
  return zlib.gzipSync(Buffer.concat(blocks));
}

function header(e: TarEntry): Buffer {
  const h = Buffer.alloc(BLOCK);
  const [prefix, name] = splitPath(e.path);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, 0o644); // mode
  octal(h, 108, 8, 0); // uid
  octal(h, 116, 8, 0); // gid
  octal(h, 124, 12, e.data.length);
  octal(h, 136, 12, Math.floor((e.mtime ?? new Date()).getTime() / 1000));
  h.fill(' ', 148, 156); // checksum counted as spaces
  h.write('0', 156, 1, 'latin1'); // regular file
  h.write('ustar\u0000', 257, 6, 'latin1');
  h.write('00', 263, 2, 'latin1');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return h;
}

/** ustar keeps up to 100 bytes of name and 155 of prefix, split at a `/`. */
function splitPath(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path];
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(name) <= 100 && Buffer.byteLength(prefix) <= 155) return [prefix, name];
  }
  throw new Error(`archive path too long for ustar: ${path}`);
}

function octal(h: Buffer, offset: number, size: number, value: number): void {
  if (value >= 8 ** (size - 1)) throw new Error(`value ${value} does not fit a ${size}-byte tar field`);
  h.write(`${value.toString(8).padStart(size - 1, '0')}\u0000`, offset, size, 'latin1');
}
