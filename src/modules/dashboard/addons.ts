/**
 * The mesh add-ons `meshctl dashboard` opens, each found in the mesh namespace (`-i`) by the
 * label its sample manifest puts on its pods: the reference's labels with the product names
 * generalised (its graphing UI uses the `app.kubernetes.io/name` label, the others `app`; its
 * second tracing UI's pods are the `-ui` ones). The first running pod is used.
 */
export interface AddOn {
  /** The `dashboard` subcommand. */
  command: 'graphing' | 'metrics-store' | 'topology' | 'tracing-a' | 'tracing-b' | 'tracing-c';
  /** For messages: "no <title> pods found". */
  title: string;
  selector: string;
  /** The UI's port inside the pod (the `--ui-port` default). */
  uiPort: number;
}

export const ADDONS: Readonly<Record<AddOn['command'], AddOn>> = {
  graphing: { command: 'graphing', title: 'graphing UI', selector: 'app.kubernetes.io/name=graphing', uiPort: 3000 },
  'metrics-store': { command: 'metrics-store', title: 'metrics store', selector: 'app=metrics-store', uiPort: 9090 },
  topology: { command: 'topology', title: 'topology UI', selector: 'app=topology', uiPort: 20001 },
  'tracing-a': { command: 'tracing-a', title: 'tracing UI (tracing-a)', selector: 'app=tracing-a', uiPort: 16686 },
  'tracing-b': { command: 'tracing-b', title: 'tracing UI (tracing-b)', selector: 'app=tracing-b-ui', uiPort: 8080 },
  'tracing-c': { command: 'tracing-c', title: 'tracing UI (tracing-c)', selector: 'app=tracing-c', uiPort: 9411 },
};

/** The daemon's debug pages: on its HTTP discovery port (`--httpAddr`, spec/01), under `/debug`. */
export const MESHD_DEBUG = { selector: 'app=meshd', port: 8080, path: '/debug' } as const;
