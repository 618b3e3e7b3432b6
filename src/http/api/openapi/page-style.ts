import { createHash } from 'node:crypto';

/** The API reference page's stylesheet (inline, allowed by its hash) and Content-Security-Policy (page.ts, routes.ts). */
export const STYLE = `
:root{--fg:#1d2330;--muted:#5b6475;--bg:#fff;--panel:#f5f7fa;--line:#dde2ea;--accent:#2563eb;--ok:#15803d;--warn:#b45309;--bad:#b91c1c}
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
code,pre{font:0.9em/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
:not(pre)>code{background:var(--panel);padding:0.05em 0.3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:#0f172a;color:#e2e8f0;padding:12px 14px;border-radius:8px;overflow-x:auto}
.layout{display:grid;grid-template-columns:260px minmax(0,1fr);max-width:1200px;margin:0 auto}
nav{position:sticky;top:0;align-self:start;height:100vh;overflow-y:auto;padding:24px 16px;border-right:1px solid var(--line);font-size:0.92em}
nav ul{list-style:none;padding-left:0;margin:0 0 12px}
nav li{margin:3px 0;overflow-wrap:anywhere}
nav .group{font-weight:600;margin-top:14px;color:var(--muted);text-transform:uppercase;font-size:0.78em;letter-spacing:0.04em}
main{padding:24px 40px 80px;min-width:0}
h1{margin-top:0}
h2{margin-top:2.4em;padding-top:0.6em;border-top:1px solid var(--line)}
h3{margin-top:1.8em}
table{border-collapse:collapse;width:100%;margin:12px 0;font-size:0.93em}
caption{text-align:left;color:var(--muted);font-size:0.85em;padding-bottom:4px}
th,td{border:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:var(--panel)}
.muted{color:var(--muted)}
.req{color:var(--bad);font-size:0.85em}
.method{display:inline-block;min-width:3.6em;text-align:center;border-radius:4px;color:#fff;font-size:0.8em;padding:1px 6px;margin-right:4px}
.m-get{background:var(--ok)}.m-post{background:var(--accent)}
.summary{color:var(--muted);font-weight:normal}
.op{border:1px solid var(--line);border-radius:10px;padding:4px 20px 12px;margin:20px 0}
.responses{padding-left:1.1em}
.responses li{margin:6px 0}
.status{font-weight:700;font-family:ui-monospace,monospace}
.s2{color:var(--ok)}.s4{color:var(--warn)}.s5{color:var(--bad)}
.callout{background:var(--panel);border-left:4px solid var(--accent);padding:10px 14px;border-radius:4px}
@media (max-width:860px){.layout{grid-template-columns:minmax(0,1fr)}nav{position:static;height:auto;border-right:0;border-bottom:1px solid var(--line)}main{padding:16px}}
`;

/**
 * The page's Content-Security-Policy: nothing but its own inline stylesheet (by hash) and links
 * to the same origin; no scripts at all.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
