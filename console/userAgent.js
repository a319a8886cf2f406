// A browser's User-Agent header as a person reads it ("Firefox 131 on Windows"), for the sessions
// table; the header itself stays whole beside it (never cut mid-word).

/** Browsers by their token, the most specific first (Edge and Opera also say Chrome; Chrome also says Safari). */
const BROWSERS = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Chrome (headless)'],
  [/\b(?:Chrome|CriOS|Chromium)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[\d.]*(?: Mobile\/\w+)? Safari\//, 'Safari'],
  [/^curl\/(\d+(?:\.\d+)?)/, 'curl'],
];

/** Systems by their token, the most specific first (Android says Linux, iOS says Mac OS X). */
const SYSTEMS = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/** "Chrome 131 on Linux", or null when the header names no browser this knows. */
export function browserSummary(userAgent) {
  if (!userAgent || userAgent.length > 1000) return null;
  const browser = BROWSERS.map(([pattern, name]) => [pattern.exec(userAgent), name]).find(([match]) => match);
  if (!browser) return null;
  const [match, name] = browser;
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  return `${name} ${match[1]}${system ? ` on ${system}` : ''}`;
}
