// Sign in with a user's password or with an API key.
import { h, field } from '../dom.js';
import { setToken, clearToken } from '../api.js';

export default {
  title: 'Sign in',
  async mount(root, params, ctx) {
    const { api } = ctx;

    async function finish(answer, who) {
      if (!answer || !answer.token) throw new Error('the node answered without a token');
      setToken(answer.token);
      try { sessionStorage.setItem('nodeflow.subject', who); } catch { /* ignore */ }
      let me;
      try {
        me = await api.get('/api/me');
        if (me && me.auth === undefined) me.auth = true;
      } catch (e) {
        // an older node without /api/me: signed in, but its role is not known here
        if (e.status === 404) me = { auth: true, role: undefined, subject: who };
        else { clearToken(); throw e; }
      }
      if (ctx.setMe) ctx.setMe(me);
      const next = params.query.get('next');
      ctx.navigate(next && next.startsWith('#/') && !next.startsWith('#/login') ? next : '#/executions');
    }

    function makeForm(kind) {
      const isUser = kind === 'user';
      const a = h('input', { type: 'text', name: isUser ? 'username' : 'keyId', autocomplete: isUser ? 'username' : 'off', required: true, spellcheck: 'false' });
      const b = h('input', { type: 'password', name: isUser ? 'password' : 'keySecret', autocomplete: isUser ? 'current-password' : 'off', required: true });
      const err = h('p', { class: 'form-error', role: 'alert' });
      const btn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in');
      const form = h('form', { novalidate: true, 'aria-label': isUser ? 'Sign in with a user name' : 'Sign in with an API key' },
        field(isUser ? 'Username' : 'Key id', a),
        field(isUser ? 'Password' : 'Key secret', b),
        btn, err);
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.textContent = '';
        if (!a.value.trim() || !b.value) {
          err.textContent = isUser ? 'Enter a user name and a password.' : 'Enter a key id and a key secret.';
          (a.value.trim() ? b : a).focus();
          return;
        }
        btn.disabled = true;
        btn.textContent = 'Signing in…';
        try {
          const answer = isUser
            ? await api.post('/api/login', { username: a.value.trim(), password: b.value })
            : await api.post('/api/token', { keyId: a.value.trim(), keySecret: b.value });
          await finish(answer, a.value.trim());
        } catch (e) {
          err.textContent = e.status === 401
            ? (isUser ? 'Wrong user name or password.' : 'Unknown, revoked or expired key, or a wrong secret.')
            : (e.message || String(e));
          b.value = '';
          b.focus();
        } finally {
          btn.disabled = false;
          btn.textContent = 'Sign in';
        }
      });
      return form;
    }

    const userForm = makeForm('user');
    const keyForm = makeForm('key');
    root.appendChild(h('div', { class: 'login-wrap' },
      h('section', { class: 'card card-pad login-card', 'aria-labelledby': 'login-title' },
        h('h1', { id: 'login-title' }, 'Sign in to nodeflow'),
        h('p', { class: 'lead' }, 'Use your user name and password, or an API key.'),
        userForm,
        h('div', { class: 'divider' }, 'or with an API key'),
        keyForm)));
    userForm.querySelector('input').focus();
  },
};
