import { html } from '../../html/html.js';
import { sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

/** The console's home page. */
export function homeRoutes(web: Console): void {
  web.get('/', 'support', async (request, reply) => {
    const session = web.session(request);
    const body = html`<h1>Operator console</h1>
<p>Signed in as <strong>${session.email}</strong> (${session.role}).</p>`;
    return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Home', section: 'home', body }));
  });
}
