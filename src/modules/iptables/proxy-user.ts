import { readFileSync } from 'node:fs';

/** The proxy's UID when no --proxy-uid is given, as the incumbent's default. */
export const DEFAULT_PROXY_UID = '1337';

/** The UID of `user` from the passwd file, or the default when the user does not exist here. */
export function proxyUidOf(user: string, passwdPath = '/etc/passwd'): string {
  let passwd = '';
  try {
    passwd = readFileSync(passwdPath, 'utf8');
  } catch {
    return DEFAULT_PROXY_UID;
  }
  for (const line of passwd.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name === user && /^\d+$/.test(uid ?? '')) return uid;
  }
  return DEFAULT_PROXY_UID;
}
