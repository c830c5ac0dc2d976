/**
 * A config that lives: the defaults, then layers in a fixed order (the file, then the
 * orchestrator ConfigMap), each one parsed and checked when it arrives. A layer that does not
 * parse is refused with its error logged (source and field), and the last good version of that
 * layer stays in force. Readers take `current()`; `onChange` hears every change of the result.
 */
import { FileState, readFileState, WatchedFile, WatchedFileOptions } from './watched-file';

export interface ConfigLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const SILENT_CONFIG_LOG: ConfigLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface LayeredConfigSpec<V, L> {
  /** What the config is, for log lines (`mesh config`). */
  what: string;
  defaults: V;
  /** Layer names, lowest first. */
  order: readonly string[];
  /** Throws a UserError naming `where` and the field; warnings are logged. */
  parse(text: string, where: string): { layer: L; warnings: string[] };
  merge(base: V, layer: L): V;
  log: ConfigLog;
  /** The error a file that is there but unusable stops start-up with. */
  startupError(message: string): Error;
}

export type ChangeListener<V> = (current: V, previous: V) => void;

export class LayeredConfig<V, L> {
  private readonly layers = new Map<string, { layer: L; where: string }>();
  private value: V;
  private readonly listeners = new Set<ChangeListener<V>>();
  private readonly files = new Map<string, WatchedFile>();
  /** What each file held when loaded: its watch reports changes from there. */
  private readonly loaded = new Map<string, FileState>();

  constructor(private readonly spec: LayeredConfigSpec<V, L>) {
    this.value = spec.defaults;
  }

  current(): V {
    return this.value;
  }

  /** `listener` hears every later change; the returned function stops it. */
  onChange(listener: ChangeListener<V>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sets a layer from its text (undefined clears it). Invalid text is refused: the error is
   * logged and returned, and the layer keeps its last good version.
   */
  setLayer(name: string, text: string | undefined, where: string): { ok: true } | { ok: false; error: string } {
    if (!this.spec.order.includes(name)) throw new Error(`${this.spec.what}: unknown layer ${JSON.stringify(name)} (one of ${this.spec.order.join(', ')})`);
    if (text === undefined) {
      if (this.layers.delete(name)) {
        this.spec.log.info(`${this.spec.what}: ${where} removed; the other layers and the defaults apply`);
        this.recompute();
      }
      return { ok: true };
    }
    let parsed: { layer: L; warnings: string[] };
    try {
      parsed = this.spec.parse(text, where);
    } catch (err) {
      const error = (err as Error).message;
      const kept = this.layers.has(name) ? 'the last good version stays in force' : 'it is not applied';
      this.spec.log.error(`${this.spec.what} rejected, ${kept}: ${error}`);
      return { ok: false, error };
    }
    for (const w of parsed.warnings) this.spec.log.warn(w);
    this.layers.set(name, { layer: parsed.layer, where });
    this.recompute();
    return { ok: true };
  }

  /**
   * Reads `file` now into layer `name` (missing = no layer; anything else wrong throws, since
   * this is start-up), to be watched from `watchFiles` on.
   */
  loadFile(name: string, file: string, where: string, options: WatchedFileOptions): void {
    const state = readFileState(file, options.maxBytes);
    if (state.kind === 'unreadable') throw this.spec.startupError(`${where}: ${state.message}`);
    if (state.kind === 'text') {
      const parsed = this.spec.parse(state.text, where);
      for (const w of parsed.warnings) this.spec.log.warn(w);
      this.layers.set(name, { layer: parsed.layer, where });
      this.recompute(false);
    }
    this.files.set(name, new WatchedFile(file, options, (s) => this.fileChanged(name, where, s)));
    this.loaded.set(name, state);
  }

  /** Starts watching the loaded files (idempotent). */
  watch(): void {
    for (const [name, watched] of this.files) watched.start(this.loaded.get(name) ?? { kind: 'missing' });
  }

  stop(): void {
    for (const watched of this.files.values()) watched.stop();
  }

  private fileChanged(name: string, where: string, state: FileState): void {
    switch (state.kind) {
      case 'text':
        this.setLayer(name, state.text, where);
        return;
      case 'missing':
        if (this.layers.has(name)) this.spec.log.warn(`${where}: the file is gone; the last good ${this.spec.what} stays in force`);
        return;
      case 'unreadable':
        this.spec.log.error(`${this.spec.what} rejected, the last good version stays in force: ${where}: ${state.message}`);
        return;
    }
  }

  private recompute(notify = true): void {
    let value = this.spec.defaults;
    for (const name of this.spec.order) {
      const entry = this.layers.get(name);
      if (entry) value = this.spec.merge(value, entry.layer);
    }
    const previous = this.value;
    if (JSON.stringify(value) === JSON.stringify(previous)) return;
    this.value = value;
    if (!notify) return;
    const sources = this.spec.order.filter((n) => this.layers.has(n)).map((n) => this.layers.get(n)!.where);
    this.spec.log.info(`${this.spec.what} changed (from ${sources.length ? sources.join(', then ') : 'the defaults'})`);
    for (const listener of [...this.listeners]) {
      try {
        listener(value, previous);
      } catch (err) {
        this.spec.log.error(`${this.spec.what}: a change listener failed: ${(err as Error).stack ?? err}`);
      }
    }
  }
}
