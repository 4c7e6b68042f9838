import net from 'node:net';

/** Loopback, private, link-local, CGNAT, documentation, multicast and other reserved ranges (IANA special-purpose). */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  // IPv4-compatible (deprecated) addresses, :: and ::1 among them: `[::127.0.0.1]` is written `[::7f00:1]`.
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** Names that are loopback by definition (RFC 6761), whatever a resolver says: `localhost` and `*.localhost`. */
export function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** True when `address` (an IP literal) must never be the target of an outbound call. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    if (/^::ffff:/i.test(address)) return true; // hex-written IPv4-mapped: refuse rather than decode
    return blocked.check(address, 'ipv6');
  }
  return true; // not an IP at all
}

/**
 * A URL host in the one spelling checks compare: without IPv6 brackets, in lower case, without the trailing dots of
 * a fully qualified name (`localhost.` is `localhost`). The WHATWG parser has already turned IPv4 written in hex,
 * octal or as one number into dotted decimal, and IPv6 into its compressed form.
 */
export function bareHost(hostname: string): string {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1).toLowerCase();
  return hostname.toLowerCase().replace(/\.+$/, '');
}

/**
 * Submit-time check of a callback or webhook URL (no DNS): a reason it is not a public HTTPS target, or null.
 * The delivery itself checks the resolved address again.
 */
export function publicHttpsUrlProblem(value: string, allowPrivateTargets: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivateTargets && url.protocol === 'http:'))
    return 'the scheme must be https';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  if (allowPrivateTargets) return null;
  const host = bareHost(url.hostname);
  if (isLoopbackName(host)) return 'the host is loopback';
  if (net.isIP(host) && isBlockedAddress(host)) return 'the address is private, loopback or reserved';
  return null;
}
