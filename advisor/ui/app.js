// SPDX-License-Identifier: Apache-2.0
// app.js - the reviewer inbox of proviso-advisor (docs/advisor.md#inbox)
//
// Plain JavaScript, no framework. Rules this file keeps:
//  - everything a proposal carries was written by an agent: it reaches the
//    page only through textContent (el() below), never through an HTML
//    parser (no markup-string sinks anywhere in this file);
//  - every string el() writes sits in its own <bdi dir="ltr"> (text()
//    below), so a bidi control or other Unicode format character that got
//    past the advisor's refusal cannot reorder the text beside it;
//  - the admin token lives in sessionStorage and travels only as an
//    Authorization: Bearer header on this origin's API (no cookies:
//    credentials 'omit');
//  - the page follows GET /v1/events?since=SEQ&wait=S, a long-poll, and
//    reloads what it shows when an event arrives.
'use strict';

(function () {
    const TOKEN_KEY = 'proviso.admin_token';
    const WAIT_S = 25;

    const state = {
        sandbox: null,     // selected sandbox name
        chunk: null,       // selected chunk id
        since: null,       // events already seen (null: not yet known)
        sandboxes: [],     // last GET /v1/sandboxes
        polling: false,
        generation: 0,     // bumped on token change: stale loops stop
        rejecting: false,  // the reject reason box is open
        confirming: null,  // {what, c}: an approval waiting for its confirm step
        refused: null,     // {chunk, text}: the 412 shown next to that chunk's decision
    };

    const $ = (id) => document.getElementById(id);

    // A string as an isolated run: a <bdi dir="ltr"> holding one text node.
    // The isolate keeps bidi controls inside it from reaching the text
    // around it (docs/security.md#invisible-characters).
    function text(s) {
        const b = document.createElement('bdi');
        b.setAttribute('dir', 'ltr');
        b.textContent = String(s);
        return b;
    }

    // Build an element; every string child becomes an isolated text run.
    function el(tag, attrs, ...children) {
        const e = document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
            if (v === null || v === undefined || v === false) {
                continue;
            }
            if (k === 'text') {
                e.replaceChildren(text(v));
            } else if (k === 'onclick') {
                e.addEventListener('click', v);
            } else {
                e.setAttribute(k, v === true ? '' : String(v));
            }
        }
        for (const c of children) {
            if (c === null || c === undefined || c === false) {
                continue;
            }
            e.append(c instanceof Node ? c : text(c));
        }
        return e;
    }

    function token() {
        return sessionStorage.getItem(TOKEN_KEY);
    }

    // ---------------------------------------------------------------------
    // Messages
    // ---------------------------------------------------------------------

    function say(kind, message) {
        const m = $('message');
        m.replaceChildren(message === '' ? '' : text(message));
        m.className = kind;
        m.hidden = message === '';
    }

    class ApiError extends Error {
        constructor(status, code, detail) {
            super(detail || code || ('HTTP ' + status));
            this.status = status;
            this.code = code || '';
            this.detail = detail || '';
        }
    }

    function describe(err) {
        if (!(err instanceof ApiError)) {
            return 'Cannot reach the advisor: ' + err.message;
        }
        if (err.status === 412) {
            return 'The evaluation changed since you read it (' + err.detail +
                '). The proposal was reloaded: review it again before deciding.';
        }
        return 'The advisor answered ' + err.status + ' ' + err.code +
            (err.detail ? ': ' + err.detail : '');
    }

    // ---------------------------------------------------------------------
    // The API
    // ---------------------------------------------------------------------

    async function api(method, path, body) {
        const headers = { 'Authorization': 'Bearer ' + token() };
        const init = { method, headers, credentials: 'omit', cache: 'no-store',
                       referrerPolicy: 'no-referrer' };
        if (body !== undefined) {
            headers['Content-Type'] = 'application/json';
            init.body = JSON.stringify(body);
        }
        const resp = await fetch(path, init);
        let data = null;
        try {
            data = await resp.json();
        } catch (e) {
            data = null;
        }
        if (resp.status === 401) {
            forget('The advisor refused the token (401). Type the admin token again.');
            throw new ApiError(401, 'unauthorized', 'token refused');
        }
        if (!resp.ok) {
            throw new ApiError(resp.status, data && data.error, data && data.detail);
        }
        return data;
    }

    const enc = encodeURIComponent;

    // ---------------------------------------------------------------------
    // Token
    // ---------------------------------------------------------------------

    function showLogin(show) {
        $('login').hidden = !show;
        $('main').hidden = show;
        $('forget').hidden = show;
        if (show) {
            $('token').focus();
        }
    }

    function forget(why) {
        sessionStorage.removeItem(TOKEN_KEY);
        state.generation++;
        state.polling = false;
        state.since = null;
        $('live').textContent = 'not connected';
        showLogin(true);
        say(why ? 'error' : '', why || '');
    }

    function useToken() {
        const t = $('token').value.trim();
        if (t === '') {
            say('error', 'The token is empty.');
            return;
        }
        sessionStorage.setItem(TOKEN_KEY, t);
        $('token').value = '';
        say('', '');
        start();
    }

    // ---------------------------------------------------------------------
    // Rendering helpers
    // ---------------------------------------------------------------------

    // One shell word: bare when it is plainly safe, else single-quoted with
    // every ' written as '\''.
    function shq(s) {
        s = String(s);
        if (/^[A-Za-z0-9_\-.,:\/@%+=]+$/.test(s)) {
            return s;
        }
        return "'" + s.replace(/'/g, "'\\''") + "'";
    }

    // A witness as the curl command line that the new policy would let
    // through (and the current one would not).
    function curlLine(w) {
        if (!w || !w.host) {
            return '';
        }
        const port = Number(w.port) || 443;
        const scheme = port === 80 ? 'http' : 'https';
        let host = String(w.host);
        if (host.includes(':') && !host.startsWith('[')) {
            host = '[' + host + ']';
        }
        let target = w.path ? String(w.path) : '/';
        if (!target.startsWith('/')) {
            target = '/' + target;
        }
        if (w.query) {
            target += '?' + String(w.query);
        }
        const parts = ['curl'];
        if (w.method) {
            parts.push('-X', shq(w.method));
        }
        if (w.ip && w.ip !== w.host) {
            parts.push('--resolve', shq(w.host + ':' + port + ':' + w.ip));
        }
        const body = gqlBody(w.graphql);
        if (body !== null) {
            parts.push('-H', shq('Content-Type: application/json'), '--data', shq(body));
        }
        parts.push(shq(scheme + '://' + host + ':' + port + target));
        return parts.join(' ');
    }

    // The GraphQL operation of a witness as the JSON body that carries it
    // ({"query":"mutation Name { f1 f2 }"}, or a persisted query's hash);
    // null for a witness without one.
    function gqlBody(g) {
        if (!g || typeof g !== 'object') {
            return null;
        }
        if (g.persisted_id) {
            return JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: String(g.persisted_id) } } });
        }
        const fields = Array.isArray(g.fields) ? g.fields.map(String) : [];
        return JSON.stringify({ query: gqlText(g) + ' { ' + fields.join(' ') + ' }' });
    }

    // "mutation CreateIssue" / "query" (anonymous)
    function gqlText(g) {
        return String(g.operation_type || 'query') + (g.operation_name ? ' ' + String(g.operation_name) : '');
    }

    // A chunk's state; an approval the envelope made (auto_approved, no
    // reviewer) is marked so wherever a person's approval would show.
    function statusBadge(c) {
        const status = String(c.status);
        const auto = status === 'approved' && c.auto_approved === true;
        return el('span', { class: 'status status-' + status + (auto ? ' status-auto' : ''),
            title: auto ? 'approved automatically: within the auto-approval envelope, no reviewer' : status,
            text: status.toUpperCase() + (auto ? ' (AUTO)' : '') });
    }

    function statusWords(c) {
        if (c.status === 'approved' && c.auto_approved === true) {
            return 'approved automatically (within the auto-approval envelope; no reviewer decided it)';
        }
        return String(c.status);
    }

    function dlRow(dl, term, value, cls) {
        dl.append(el('dt', { text: term }));
        const dd = el('dd', { class: cls });
        if (value instanceof Node) {
            dd.append(value);
        } else {
            dd.replaceChildren(text(value === null || value === undefined || value === '' ? 'none' : value));
        }
        dl.append(dd);
    }

    // The grants of a prover answer, one line each ("+ binary -> host:ports
    // route, access"), or a sentence when there are none.
    function grantLines(prover) {
        const gs = (prover && prover.grants) || [];
        if (gs.length === 0) {
            return 'grants nothing beyond the policy it was proved against';
        }
        // each grant with its breadth marks and, when it is wide, the words
        return gs.map((g) => {
            const b = g.breadth;
            const words = breadthWords(g);
            return (g.change === 'changed' ? '~ ' : '+ ') + g.binary + ' -> ' +
                (g.host || g.target_sandbox || '(hostless)') + ':' + (g.ports || []).join(',') + ' ' +
                g.route + ', ' + accessText(g) +
                ((g.credentials || []).length ? '; credentials ' + g.credentials.join(', ') : '') +
                (b && typeof b === 'object' ? '  [binary: ' + b.binary + ', host: ' + b.host + ', route: ' +
                    b.route + ', methods: ' + b.methods + ']' : '') +
                (words ? '\n      wide: ' + words : '');
        }).join('\n');
    }

    function pre(s, cls) {
        return el('pre', { class: cls, text: s === '' ? '(empty)' : s });
    }

    // The policy diff (docs/advisor.md#diff), a line each: a hunk's
    // "@@ PATH @@" header (class hunk), context (' ', ctx), removed ('-',
    // del) and added ('+', add). Each line keeps its mark; colour only
    // repeats it. A diff stored before hunks (every line '-' or '+', no
    // header) reads the same way.
    function diffPre(s) {
        if (!s) {
            return pre('', 'diff');
        }
        const p = el('pre', { class: 'diff' });
        for (const line of s.replace(/\n$/, '').split('\n')) {
            const kind = line.startsWith('@@') ? 'hunk'
                : line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : 'ctx';
            p.append(el('span', { class: 'line ' + kind }, line + '\n'));
        }
        return p;
    }

    // ---------------------------------------------------------------------
    // Sandboxes
    // ---------------------------------------------------------------------

    async function loadSandboxes() {
        const list = await api('GET', '/v1/sandboxes');
        const sandboxes = list.sandboxes || [];
        const counts = await Promise.all(sandboxes.map(async (sb) => {
            try {
                const p = await api('GET', '/v1/sandboxes/' + enc(sb.name) + '/proposals');
                const cs = p.chunks || [];
                return {
                    pending: cs.filter((c) => c.status === 'pending').length,
                    suspended: cs.filter((c) => c.status === 'suspended').length,
                };
            } catch (e) {
                return null;
            }
        }));
        sandboxes.forEach((sb, i) => {
            sb.pending = counts[i] === null ? null : counts[i].pending;
            sb.suspended = counts[i] === null ? 0 : counts[i].suspended;
        });
        state.sandboxes = sandboxes;
        renderSandboxes();
    }

    function renderSandboxes() {
        const ul = $('sandboxes');
        ul.replaceChildren();
        if (state.sandboxes.length === 0) {
            ul.append(el('li', { class: 'hint', text: 'No sandboxes yet.' }));
        }
        for (const sb of state.sandboxes) {
            const pending = sb.pending === null ? '?' : String(sb.pending);
            const b = el('button', {
                type: 'button', class: 'sandbox', 'aria-pressed': String(sb.name === state.sandbox),
                onclick: () => selectSandbox(sb.name),
            },
            el('span', { class: 'name', text: sb.name }), ' ',
            el('span', { class: 'pending', text: pending + ' pending' }), ' ',
            sb.suspended > 0 ? el('span', { class: 'suspended', text: sb.suspended + ' suspended' }) : '',
            sb.suspended > 0 ? ' ' : '',
            el('span', { class: 'rev', text: 'v' + (sb.policy_version || 0) }));
            ul.append(el('li', { 'data-sandbox': sb.name }, b));
        }
    }

    function sandboxInfo(name) {
        return state.sandboxes.find((sb) => sb.name === name) || null;
    }

    function selectSandbox(name) {
        state.sandbox = name;
        state.chunk = null;
        state.rejecting = false;
        state.confirming = null;
        refresh();
    }

    // ---------------------------------------------------------------------
    // Proposals
    // ---------------------------------------------------------------------

    async function loadProposals() {
        const ul = $('proposals');
        if (state.sandbox === null) {
            $('proposals-title').textContent = 'Proposals';
            ul.replaceChildren(el('li', { class: 'hint', text: 'Select a sandbox.' }));
            return;
        }
        // Suspended approvals are back in the inbox beside the pending
        // proposals (docs/advisor.md#reproof).
        const undecidedOnly = !$('show-decided').checked;
        let list;
        try {
            list = await api('GET', '/v1/sandboxes/' + enc(state.sandbox) + '/proposals');
        } catch (e) {
            if (e instanceof ApiError && e.status === 404) {
                state.sandbox = null;
                state.chunk = null;
                return loadProposals();
            }
            throw e;
        }
        $('proposals-title').replaceChildren('Proposals of ', text(state.sandbox));
        ul.replaceChildren();
        const chunks = (list.chunks || []).filter((c) =>
            !undecidedOnly || c.status === 'pending' || c.status === 'suspended');
        if (chunks.length === 0) {
            ul.append(el('li', { class: 'hint', text: 'Nothing to review.' }));
        }
        for (const c of chunks) {
            const b = el('button', {
                type: 'button', class: 'proposal', 'aria-pressed': String(c.chunk_id === state.chunk),
                onclick: () => selectChunk(c.chunk_id),
            },
            statusBadge(c), ' ',
            el('span', { class: 'rule', text: c.rule_name }), ' ',
            el('span', { class: 'endpoint', text: c.host + ':' + c.port }), ' ',
            el('span', { class: 'validation', text: (c.validation_result || '').split('\n')[0] }));
            const gs = grantsSummary((c.evidence || {}).prover);
            if (gs !== null) {
                b.append(el('span', { class: 'grants-summary', text: gs }));
            }
            ul.append(el('li', { 'data-chunk': c.chunk_id }, b));
        }
    }

    function selectChunk(id) {
        // the last decision's message belongs to the proposal it was about
        say('', '');
        state.chunk = id;
        state.rejecting = false;
        state.confirming = null;
        refresh();
    }

    // ---------------------------------------------------------------------
    // One proposal: its evidence and the decision
    // ---------------------------------------------------------------------

    // A policy glob as a regular expression: '**' any run, '*' one part
    // (between two of 'sep'), the rest literal. Display only: the advisor
    // and the prover decide; this only picks which pattern to show.
    function globRe(glob, sep) {
        const one = '[^' + (sep === '/' ? '/' : '.') + ']*';
        let src = '';
        const g = String(glob);
        for (let i = 0; i < g.length; i++) {
            if (g[i] === '*' && g[i + 1] === '*') {
                src += '.*';
                i++;
            } else if (g[i] === '*') {
                src += one;
            } else {
                src += g[i].replace(/[\\^$.|?+()[\]{}]/g, '\\$&');
            }
        }
        return new RegExp('^' + src + '$', 'i');
    }

    function endpointPorts(ep) {
        if (Array.isArray(ep.ports)) {
            return ep.ports.map(Number);
        }
        return ep.port === undefined ? [] : [Number(ep.port)];
    }

    // The pattern of the proposed rule that opens one finding path: the
    // allow rule (method and path glob) of the endpoint the path goes
    // to, its access preset, "all traffic (not inspected)" for an opaque
    // endpoint, "every request (..., audit mode)" for an inspected one
    // that is not enforced, and "no request" for an enforced one without
    // allow rules (the route the prover names, never "not inspected" for
    // an inspected one). The witness (one concrete request) stays as detail; a
    // reviewer judges the pattern.
    function rulePattern(rule, p) {
        const w = p.witness || {};
        const host = String(p.host || w.host || '');
        const port = Number(p.port || w.port || 0);
        const method = String(w.method || p.method || '').toUpperCase();
        const wpath = String(w.path || '');
        const eps = ((rule && rule.endpoints) || []).filter((ep) =>
            typeof ep.host === 'string' && globRe(ep.host, '.').test(host) &&
            (endpointPorts(ep).length === 0 || endpointPorts(ep).includes(port)));
        const out = [];
        const g = w.graphql && typeof w.graphql === 'object' ? w.graphql : null;
        for (const ep of eps) {
            const rules = Array.isArray(ep.rules) ? ep.rules.map((r) => r && r.allow).filter(Boolean) : [];
            const gqlRules = rules.filter((a) => a.operation_type !== undefined);
            if (g !== null && gqlRules.length) {
                // the GraphQL allow rules that admit the witness's operation:
                // its type, its name, every root field under one rule
                const fields = Array.isArray(g.fields) ? g.fields.map(String) : [];
                for (const a of gqlRules) {
                    const t = String(a.operation_type);
                    const names = Array.isArray(a.fields) ? a.fields.map(String) : null;
                    if ((t !== '*' && t !== String(g.operation_type)) ||
                        (a.operation_name !== undefined && (!g.operation_name ||
                            !globRe(a.operation_name, '/').test(String(g.operation_name)))) ||
                        (names !== null && !fields.every((f) => names.some((n) => globRe(n, '/').test(f))))) {
                        continue;
                    }
                    out.push(t + (a.operation_name !== undefined ? ' ' + a.operation_name : '') +
                        (names !== null ? ' {' + names.join(', ') + '}' : ' (any fields)'));
                }
                continue;
            }
            if (g !== null && ep.access && ep.protocol === 'graphql') {
                out.push('access ' + ep.access + ' (its operation types)');
                continue;
            }
            if (rules.length) {
                const byMethod = rules.filter((a) => !a.method || a.method === '*' ||
                    String(a.method).toUpperCase() === method || method === '');
                const byPath = byMethod.filter((a) => !wpath || globRe(a.path || '/**', '/').test(wpath));
                for (const a of (byPath.length ? byPath : byMethod)) {
                    out.push((a.method || '*') + ' ' + (a.path || '/**') +
                        (a.query ? ' ?' + JSON.stringify(a.query) : ''));
                }
            } else if (ep.access) {
                out.push('access ' + ep.access + ' (its methods on /**)');
            } else if (!ep.protocol || ep.protocol === 'tcp' || ep.tls === 'skip') {
                out.push('all traffic (not inspected)');
            } else if (ep.enforcement !== 'enforce') {
                out.push('every request (' + ep.protocol + ', audit mode: not enforced)');
            } else {
                // inspected and enforced without an allow rule: it admits no request
                out.push('no request (' + ep.protocol + ' endpoint without allow rules)');
            }
        }
        if (out.length === 0) {
            return p.rule ? 'through rule ' + p.rule : '(no pattern of this rule)';
        }
        return [...new Set(out)].join(', ');
    }

    // "1 finding, 2 paths" - what the table holds, in its own words.
    function findingsCount(prover) {
        const fs = (prover && prover.findings) || [];
        let listed = 0;
        let total = 0;
        for (const f of fs) {
            const n = (f.paths || []).length;
            listed += n;
            total += Number.isInteger(f.paths_total) && f.paths_total > n ? f.paths_total : n;
        }
        return plural(fs.length, 'finding') + ', ' + plural(total, 'path') +
            (total > listed ? ' (' + listed + ' listed)' : '');
    }

    function findingsTable(prover, rule) {
        const rows = [];
        for (const f of (prover && prover.findings) || []) {
            for (const p of f.paths || []) {
                rows.push({ category: f.category, path: p });
            }
        }
        if (rows.length === 0) {
            return null;
        }
        const cols = ['Category', 'Binary', 'Host:port', 'Method', 'Rule pattern', 'Risk', 'Credentials'];
        const table = el('table', { id: 'findings', class: 'findings' },
            el('caption', { id: 'findings-count',
                text: findingsCount(prover) + ': each path the change opens, the pattern of the ' +
                    'proposed rule that opens it, and a witness request' }));
        const head = el('tr', {});
        for (const h of cols) {
            head.append(el('th', { scope: 'col', text: h }));
        }
        table.append(el('thead', {}, head));
        const body = el('tbody', {});
        for (const r of rows) {
            const p = r.path;
            const w = p.witness || {};
            const risk = w.risk ? String(w.risk) : '';
            // the category's words, so a long one wraps between them
            body.append(el('tr', { class: 'path' },
                el('td', { class: 'category', 'data-category': r.category,
                    text: String(r.category || '').replace(/_/g, ' ') }),
                el('td', { text: p.binary || w.binary || '' }),
                el('td', { text: (p.host || w.host || '*') + ':' + (p.port || w.port || '') }),
                el('td', { text: w.graphql ? 'GraphQL ' + gqlText(w.graphql) : (w.method || p.method || 'any') }),
                el('td', { class: 'pattern', text: rulePattern(rule, p) }),
                el('td', { class: 'risk' + (risk ? ' risk-' + risk : ''),
                    text: risk ? risk + (w.action ? ' (' + (w.api ? w.api + ' ' : '') + w.action + ')' : '')
                        : 'not rated' }),
                el('td', { text: (p.credentials || []).join(', ') || 'none' })));
            body.append(el('tr', { class: 'witness' },
                el('td', { colspan: String(cols.length) },
                    el('span', { class: 'witness-scroll' }, 'witness: ',
                        el('code', { class: 'witness', text: curlLine(p.witness) || '(none)' })))));
        }
        table.append(body);
        return el('div', { class: 'table-wrap' }, table);
    }

    // ---------------------------------------------------------------------
    // What the change grants (docs/semantics.md#grants): shown first, with
    // the breadth of each grant (docs/semantics.md#grant-breadth), so that a
    // verdict of "no new findings" never reads as "nothing granted".
    // ---------------------------------------------------------------------

    // The marks that make a grant wide: they get the "wide" class (the word
    // is always written; the style only repeats it).
    const WIDE = {
        binary: ['glob', 'any'],
        host: ['any-depth', 'one-label'],
        route: ['opaque', 'audit'],
        methods: ['all', 'writes'],
    };

    const GLOB_META = /[*?[\]{}\\]/;

    // How wide one grant is, in words, for every dimension that is not
    // narrow; null for a grant narrow in all of them. The same words as
    // proviso prove and proviso rule get (prover/prover_grants.c,
    // put_breadth_words; docs/cli.md#prove).
    function breadthWords(g) {
        const b = g.breadth;
        if (!b || typeof b !== 'object') {
            return null;
        }
        const bm = String(b.binary || 'exact');
        const hm = String(b.host || 'exact');
        const route = String(b.route || 'inspected');
        const mm = String(b.methods || 'read-only');
        const words = [];
        if (bm !== 'exact') {
            const bin = String(g.binary || '?');
            if (bm === 'any') {
                words.push('any binary');
            } else if (bin.length > 3 && bin.endsWith('/**') && !GLOB_META.test(bin.slice(0, -3))) {
                words.push('any binary under ' + bin.slice(0, -3));
            } else if (bin.length > 2 && bin.endsWith('/*') && !GLOB_META.test(bin.slice(0, -2))) {
                words.push('any binary directly in ' + bin.slice(0, -2));
            } else {
                words.push('any binary matching ' + bin);
            }
        }
        if (hm !== 'exact' && hm !== 'hostless') {
            const host = String(g.host || '*');
            if (/^[*.]*$/.test(host)) {
                words.push('any host');
            } else if (hm === 'any-depth') {
                words.push(host.length > 3 && host.startsWith('**.') && !GLOB_META.test(host.slice(3))
                    ? 'any subdomain of ' + host.slice(3) + ' at any depth'
                    : 'any host matching ' + host + ' (** spans labels)');
            } else {
                words.push(host.length > 2 && host.startsWith('*.') && !GLOB_META.test(host.slice(2))
                    ? 'any one-label subdomain of ' + host.slice(2)
                    : 'any host matching ' + host + ' (each * within one label)');
            }
        }
        if (route === 'opaque') {
            words.push('all traffic, not inspected');
        } else if (route === 'audit') {
            words.push('every request (audit mode: logged, not enforced)');
        } else if (mm === 'all') {
            const a0 = Array.isArray(g.access) && typeof g.access[0] === 'string' ? g.access[0] : '';
            words.push(a0.startsWith('GraphQL ') ? 'every GraphQL operation'
                : a0.startsWith('call ') ? 'every call' : 'every method');
        } else if (mm === 'writes') {
            words.push('writes');
        }
        return words.length ? words.join(', ') : null;
    }

    function plural(n, word) {
        return n + ' ' + word + (n === 1 ? '' : 's');
    }

    function grantPlace(g) {
        const ports = Array.isArray(g.ports) && g.ports.length ? g.ports.join(',') : '*';
        return (g.binary || '?') + ' -> ' + (g.host || '*') + ':' + ports + ' ' + (g.route || '?');
    }

    // The headline sentence, worded as proviso prove and proviso rule get
    // word it (prover_review_text).
    function grantsHeadline(prover) {
        const grants = prover.grants;
        const nchanged = grants.filter((g) => g.change === 'changed').length;
        const nnew = grants.length - nchanged;
        let count;
        if (grants.length === 0) {
            count = 'no new or changed unit';
        } else if (nchanged === 0) {
            count = plural(nnew, 'new unit');
        } else if (nnew === 0) {
            count = plural(nchanged, 'changed unit');
        } else {
            count = plural(nnew, 'new unit') + ' and ' + plural(nchanged, 'changed unit');
        }
        if (grants.length === 1) {
            const words = breadthWords(grants[0]);
            count += ': ' + grantPlace(grants[0]) + (words ? ', wide: ' + words : '');
        } else if (grants.length > 1) {
            const wide = grants.filter((g) => breadthWords(g) !== null).length;
            count += wide ? ' (listed below; ' + wide + ' of them wide)' : ' (listed below)';
        }
        let verdict;
        const cats = Array.isArray(prover.categories) ? prover.categories : [];
        if (prover.verdict === 'empty') {
            verdict = 'prover: no new findings';
        } else if (prover.verdict === 'findings') {
            verdict = 'prover: ' + plural(cats.length, 'new finding') + ' (' + cats.join(', ') + ')';
        } else if (prover.verdict === 'unknown') {
            verdict = 'prover: undecided (' + (prover.reason_code || prover.reason || 'unknown') +
                '), so not approvable automatically';
        } else {
            verdict = 'prover: ' + (prover.verdict || 'no verdict');
        }
        return 'This change grants ' + count + '; ' + verdict + '.';
    }

    // A grant's access lines; a line a changed unit's endpoint gained is
    // marked " (added)", as the CLI's text does (prover_grants.c).
    function accessText(g) {
        const added = Array.isArray(g.added_access) ? g.added_access : [];
        return (Array.isArray(g.access) ? g.access : []).map((a) =>
            a + (added.includes(a) ? ' (added)' : '')).join(', ');
    }

    function grantItem(g) {
        const b = g.breadth || {};
        const changed = g.change === 'changed';
        const access = Array.isArray(g.access) && g.access.length ? ', ' + accessText(g) : '';
        const marks = el('span', { class: 'breadth' }, '[');
        ['binary', 'host', 'route', 'methods'].forEach((k, i) => {
            const v = b[k] === undefined ? '?' : String(b[k]);
            marks.append(text(i ? ', ' : ''), el('span', { class: 'mark' + (WIDE[k].includes(v) ? ' wide' : ''),
                'data-dim': k, text: k + ': ' + v }));
        });
        marks.append(text(']'));
        const extra = ['rule ' + (g.rule || '-')];
        const words = breadthWords(g);
        if (words) {
            extra.push('wide: ' + words);
        }
        if (Array.isArray(g.credentials) && g.credentials.length) {
            extra.push('credentials in scope: ' + g.credentials.join(', '));
        }
        if (Array.isArray(g.private_destinations) && g.private_destinations.length) {
            extra.push('private destinations: ' + g.private_destinations.join(', '));
        }
        if (g.target_sandbox) {
            extra.push('peer sandbox: ' + g.target_sandbox);
        }
        return el('li', { class: 'grant ' + (changed ? 'grant-changed' : 'grant-new') },
            el('code', { class: 'grant-line', text: (changed ? '~ ' : '+ ') + grantPlace(g) + access }),
            ' ', marks,
            el('span', { class: 'grant-extra', text: extra.join('; ') }));
    }

    // The section, or null when the evidence carries no grant list (no
    // prover run, an older advisor): then nothing is claimed either way.
    function grantsSection(prover) {
        if (!prover || !Array.isArray(prover.grants)) {
            return null;
        }
        const sec = el('section', { id: 'grants', 'aria-labelledby': 'grants-title' },
            el('h3', { id: 'grants-title', text: 'What this change grants' }),
            el('p', { id: 'grants-headline', text: grantsHeadline(prover) }));
        if (prover.grants.length) {
            const ul = el('ul', { class: 'grants' });
            for (const g of prover.grants) {
                ul.append(grantItem(g));
            }
            sec.append(ul);
        }
        return sec;
    }

    // One line for the proposal list: "grants 1 unit; wide: host any-depth,
    // methods all" (null without a grant list).
    function grantsSummary(prover) {
        if (!prover || !Array.isArray(prover.grants)) {
            return null;
        }
        const wide = new Set();
        for (const g of prover.grants) {
            const b = g.breadth || {};
            for (const k of Object.keys(WIDE)) {
                if (WIDE[k].includes(String(b[k]))) {
                    wide.add(k + ' ' + b[k]);
                }
            }
        }
        const n = prover.grants.length;
        return 'grants ' + (n === 0 ? 'no new or changed unit' : plural(n, 'unit')) +
            (wide.size ? '; wide: ' + [...wide].join(', ') : '');
    }

    // What the findings section says when the prover found nothing: the
    // grants stay in view (no finding is never worded as "no grant").
    function noFindingsText(prover) {
        if (!prover) {
            return 'No prover evidence for this proposal.';
        }
        if (!Array.isArray(prover.grants)) {
            return 'No new prover findings (this evidence lists no grants).';
        }
        const n = prover.grants.length;
        if (n === 0) {
            return 'No new prover findings; the change grants no new or changed unit.';
        }
        return 'No new prover findings; the change grants ' + plural(n, 'unit') +
            ' (see "What this change grants" above).';
    }

    function credentialsInScope(prover) {
        const names = new Set();
        for (const f of (prover && prover.findings) || []) {
            for (const p of f.paths || []) {
                for (const c of p.credentials || []) {
                    names.add(String(c));
                }
            }
        }
        return [...names].sort();
    }

    async function loadDetail() {
        const d = $('detail');
        if (state.sandbox === null || state.chunk === null) {
            d.replaceChildren(el('h2', { id: 'detail-title', text: 'Proposal' }),
                el('p', { class: 'hint', text: 'Select a proposal to read its evidence.' }));
            return;
        }
        let c;
        try {
            c = await api('GET', '/v1/sandboxes/' + enc(state.sandbox) + '/proposals/' + enc(state.chunk));
        } catch (e) {
            if (e instanceof ApiError && e.status === 404) {
                state.chunk = null;
                return loadDetail();
            }
            throw e;
        }
        renderDetail(c);
    }

    function renderDetail(c) {
        const d = $('detail');
        const sb = sandboxInfo(state.sandbox);
        const ev = c.evidence || {};
        const prover = ev.prover || null;
        d.replaceChildren();
        d.setAttribute('data-chunk', c.chunk_id);
        d.setAttribute('data-status', c.status);
        d.append(el('h2', { id: 'detail-title' }, 'Rule ', el('span', { class: 'rule', text: c.rule_name }), ' ',
            statusBadge(c)));
        const grants = grantsSection(prover);
        if (grants !== null) {
            d.append(grants);
        }

        const dl = el('dl', { class: 'facts' });
        dlRow(dl, 'Chunk', c.chunk_id, 'mono');
        dlRow(dl, 'Sandbox', state.sandbox);
        dlRow(dl, 'Status', statusWords(c), 'chunk-status');
        dlRow(dl, 'Endpoint', c.host + ':' + c.port);
        dlRow(dl, 'Binary', c.binary);
        dlRow(dl, 'Proposed by', c.analysis_mode + ', confidence ' +
            Math.round((Number(c.confidence) || 0) * 100) + '% (the proposer\'s estimate that the rule ' +
            'is wanted, not a safety score; the grants and findings are), seen ' + c.hit_count + ' time(s)',
        'proposed-by');
        dlRow(dl, 'Rationale', c.rationale, 'rationale');
        dlRow(dl, 'Effective policy', sb ? 'revision ' + sb.policy_version + ' (sha256:' +
            String(sb.policy_hash || '').slice(0, 12) + ')' : 'unknown', 'effective-revision');
        if (c.approved_revision > 0) {
            dlRow(dl, 'Approved into', 'revision ' + c.approved_revision +
                (c.policy_reloaded ? ' (loaded by the proxy)' : ' (not yet loaded by a proxy)'));
        }
        if (c.rejection_reason) {
            dlRow(dl, 'Rejection reason', c.rejection_reason, 'rejection-reason');
        }
        if (c.status === 'suspended') {
            dlRow(dl, 'Suspended', (c.suspension_reason || '') + ' - left out of the effective policy ' +
                'until a reviewer approves it again or rejects it', 'suspension-reason');
        }
        if (c.application_error) {
            dlRow(dl, 'Application error', c.application_error, 'application-error');
        }
        d.append(dl);

        d.append(el('h3', { text: 'Validation result' }), pre(c.validation_result || '', 'validation-result'));
        if (prover && prover.verdict === 'unknown') {
            d.append(el('p', { class: 'warn', text: 'The prover could not decide (' + (prover.reason || 'unknown') +
                '): the findings below may be incomplete.' }));
        }

        d.append(el('h3', { text: 'Findings' }));
        const table = findingsTable(prover, c.proposed_rule);
        d.append(table || el('p', { id: 'no-findings', text: noFindingsText(prover) }));

        const creds = credentialsInScope(prover);
        d.append(el('h3', { text: 'Credentials in scope' }),
            el('p', { id: 'credentials', text: creds.length ? creds.join(', ') : 'none' }));

        d.append(el('h3', { text: 'Security notes' }),
            el('p', { id: 'security-notes', text: c.security_notes || 'none' }));

        if (ev.envelope && ev.envelope.note) {
            d.append(el('h3', { text: 'Auto-approval envelope' }),
                el('p', { id: 'envelope-note', class: 'warn', text: ev.envelope.note }));
        }
        if (ev.boundary) {
            const b = ev.boundary;
            d.append(el('h3', { text: 'Auto-approval boundary' }),
                pre(b.error ? 'error: ' + b.error : (b.validation_result || b.verdict || JSON.stringify(b)), 'boundary'));
        }

        if (ev.suggestion) {
            // A narrower rule the advisor proved approvable (empty verdict,
            // within the envelope): offered beside the proposal.
            const sg = ev.suggestion;
            d.append(el('h3', { text: 'A narrower rule, proved approvable' }),
                el('p', { class: 'hint', text: 'Built from what the sandbox was denied and proved ' +
                    'against the same policy: ' + (sg.validation_result || '') + '.' }),
                pre(grantLines({ grants: sg.grants }), 'suggestion-grants'),
                el('details', { class: 'rule-json' },
                    el('summary', { text: 'The narrowed rule (JSON)' }),
                    pre(JSON.stringify(sg.rule, null, 2), 'suggestion-rule')));
        }
        if (c.status === 'suspended' && c.approved_evidence) {
            // Both evidences side by side: what the approval rested on and
            // what the chunk grants now.
            const was = c.approved_evidence.prover || null;
            const cmp = el('div', { class: 'compare', id: 'evidence-compare' });
            cmp.append(
                el('div', {}, el('h4', { text: 'When approved' }),
                    pre((was && was.validation_result) || '(no prover answer)', 'validation-was'),
                    pre(grantLines(was), 'grants-was')),
                el('div', {}, el('h4', { text: 'Now' }),
                    pre((prover && prover.validation_result) || '(no prover answer)', 'validation-now'),
                    pre(grantLines(prover), 'grants-now')));
            d.append(el('h3', { text: 'Evidence at approval and now' }), cmp);
        }

        // The rule once: as the change to the policy. The JSON the agent
        // sent stays one click away.
        d.append(el('h3', { text: 'The change to the policy' }), diffPre(ev.diff || ''));
        d.append(el('details', { class: 'rule-json' },
            el('summary', { text: 'The proposed rule as submitted (JSON)' }),
            pre(JSON.stringify(c.proposed_rule, null, 2), 'rule-json')));

        d.append(decisionBox(c));
    }

    // The confirm step of an approval: it names what would be granted (the
    // grants of the evaluation on the screen, or of the narrowed rule)
    // before anything is sent. It keeps the evaluation it was opened with:
    // a refresh underneath does not change what the reviewer is
    // confirming, and the advisor refuses a stale one (412).
    function confirmBox(c, what) {
        const cc = state.confirming.c;
        const sug = what === 'approve-suggestion';
        const prover = sug ? { grants: (cc.evidence.suggestion || {}).grants || [] }
            : ((cc.evidence || {}).prover || null);
        const grants = prover && Array.isArray(prover.grants) ? prover.grants : null;
        const box = el('div', { id: 'confirm', class: 'confirm', role: 'alertdialog',
            'aria-labelledby': 'confirm-title', 'data-action': what });
        box.append(el('h4', { id: 'confirm-title', text: (sug ? 'Approve the narrowed rule for ' : 'Approve rule ') +
            cc.rule_name + ' in sandbox ' + state.sandbox + '?' }));
        if (grants === null) {
            box.append(el('p', { id: 'confirm-grants-headline',
                text: 'This evidence lists no grants: the prover did not say what the change grants.' }));
        } else {
            box.append(el('p', { id: 'confirm-grants-headline', text: 'Approving grants ' +
                (grants.length === 0 ? 'no new or changed unit' : plural(grants.length, 'unit')) +
                (grants.length ? ':' : '.') }));
            if (grants.length) {
                box.append(pre(grantLines(prover), 'confirm-grants'));
            }
        }
        if (!sug && prover && Array.isArray(prover.findings) && prover.findings.length) {
            box.append(el('p', { id: 'confirm-findings', text: 'The prover found ' + findingsCount(prover) +
                ' (' + (prover.categories || []).join(', ') + ').' }));
        }
        const env = (cc.evidence || {}).envelope;
        if (!sug && env && env.note) {
            box.append(el('p', { id: 'confirm-envelope', class: 'warn', text: env.note }));
        }
        if (cc.review_token !== c.review_token) {
            box.append(el('p', { class: 'warn', text: 'The evaluation changed since this was opened; the ' +
                'advisor will refuse this approval. Cancel and review the proposal again.' }));
        }
        box.append(el('button', { type: 'button', id: 'approve-confirm', class: 'approve',
            onclick: () => decide(cc, what) }, sug ? 'Approve the narrowed rule' : 'Approve: grant this'), ' ',
        el('button', { type: 'button', id: 'approve-cancel',
            onclick: () => { state.confirming = null; renderDetail(c); } }, 'Cancel'));
        return box;
    }

    function openConfirm(c, what) {
        state.confirming = { what, c };
        state.rejecting = false;
        renderDetail(c);
        $('approve-confirm').focus();
    }

    function decisionBox(c) {
        const box = el('div', { class: 'decision', role: 'group', 'aria-label': 'Decision' });
        box.append(el('h3', { text: 'Decision' }));
        if (state.refused && state.refused.chunk === c.chunk_id) {
            // a 412 next to the decision it refused: the evidence above is
            // the refreshed evaluation, and its token is the one now sent
            box.append(el('p', { id: 'decision-refused', class: 'warn', text: state.refused.text }));
        }
        const canApprove = c.status === 'pending' || c.status === 'rejected' || c.status === 'suspended';
        const canReject = c.status === 'pending' || c.status === 'approved' || c.status === 'suspended';
        const sug = c.evidence && c.evidence.suggestion;
        const confirming = state.confirming !== null && state.confirming.c.chunk_id === c.chunk_id &&
            canApprove ? state.confirming.what : null;
        if (confirming !== null) {
            box.append(confirmBox(c, confirming));
            box.append(el('p', { class: 'hint mono', text: 'review token ' +
                String(state.confirming.c.review_token || '').slice(0, 16) }));
            return box;
        }
        if (canApprove && sug) {
            box.append(el('button', { type: 'button', id: 'approve-suggestion', class: 'approve',
                onclick: () => openConfirm(c, 'approve-suggestion') }, 'Approve the narrowed rule...'), ' ');
        }
        if (canApprove) {
            box.append(el('button', { type: 'button', id: 'approve', class: sug ? 'approve-wide' : 'approve',
                onclick: () => openConfirm(c, 'approve') }, sug ? 'Approve as proposed...' : 'Approve...'), ' ');
        }
        if (canReject && !state.rejecting) {
            box.append(el('button', { type: 'button', id: 'reject', class: 'reject',
                onclick: () => { state.rejecting = true; renderDetail(c); $('reason').focus(); } },
            c.status === 'approved' ? 'Reject (remove the grant)...' : 'Reject...'));
        }
        if (canReject && state.rejecting) {
            box.append(el('label', { for: 'reason', text: 'Reason for rejecting (required; the agent reads it)' }),
                el('textarea', { id: 'reason', rows: '3', maxlength: '1000' }),
                el('button', { type: 'button', id: 'reject-confirm', class: 'reject',
                    onclick: () => decide(c, 'reject') }, 'Confirm reject'), ' ',
                el('button', { type: 'button', id: 'reject-cancel',
                    onclick: () => { state.rejecting = false; renderDetail(c); } }, 'Cancel'));
        }
        if (!canApprove && !canReject) {
            box.append(el('p', { text: 'No decision is possible in this state.' }));
        }
        box.append(el('p', { class: 'hint mono', text: 'review token ' + String(c.review_token || '').slice(0, 16) }));
        return box;
    }

    async function decide(c, what) {
        const path = '/v1/sandboxes/' + enc(state.sandbox) + '/proposals/' + enc(c.chunk_id) + '/' + what;
        let body;
        if (what === 'approve') {
            body = { review_token: c.review_token };
        } else if (what === 'approve-suggestion') {
            body = { review_token: c.evidence.suggestion.review_token };
        } else {
            const reason = $('reason').value.trim();
            if (reason === '') {
                say('error', 'Give a reason for rejecting.');
                $('reason').focus();
                return;
            }
            body = { reason };
        }
        for (const b of document.querySelectorAll('.decision button')) {
            b.disabled = true;
        }
        state.confirming = null;
        state.refused = null;
        try {
            const out = await api('POST', path, body);
            state.rejecting = false;
            say('ok', (what === 'approve' ? 'Approved' : what === 'approve-suggestion' ?
                'Approved the narrowed rule for' : 'Rejected') + ' rule ' + c.rule_name +
                (out.policy_version ? '; the effective policy is now revision ' + out.policy_version : '') + '.');
        } catch (e) {
            say('error', describe(e));
            if (e instanceof ApiError && e.status === 412) {
                state.refused = { chunk: c.chunk_id, text: describe(e) };
            }
        }
        await refresh();
    }

    // ---------------------------------------------------------------------
    // Refresh and live updates
    // ---------------------------------------------------------------------

    let refreshing = null;
    let again = false;

    // One refresh at a time; a request during one runs once more after it.
    async function refresh() {
        if (refreshing) {
            again = true;
            return refreshing;
        }
        refreshing = (async () => {
            do {
                again = false;
                try {
                    await loadSandboxes();
                    await loadProposals();
                    await loadDetail();
                } catch (e) {
                    if (!(e instanceof ApiError && e.status === 401)) {
                        say('error', describe(e));
                    }
                }
            } while (again && token() !== null);
        })();
        try {
            await refreshing;
        } finally {
            refreshing = null;
        }
        document.body.setAttribute('data-refreshed', String(Date.now()));
    }

    const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

    async function follow(gen) {
        while (gen === state.generation && token() !== null) {
            const wait = state.since === null ? '' : '&wait=' + WAIT_S;
            const since = state.since === null ? 0 : state.since;
            try {
                const out = await api('GET', '/v1/events?since=' + since + '&limit=1000' + wait);
                if (gen !== state.generation) {
                    return;
                }
                const fresh = (out.events || []).length > 0;
                const first = state.since === null;
                state.since = out.next_since;
                $('live').textContent = 'live: up to date at event ' + state.since;
                document.body.setAttribute('data-events', String(state.since));
                if (fresh && !first) {
                    await refresh();
                }
            } catch (e) {
                if (e instanceof ApiError && e.status === 401) {
                    return;
                }
                $('live').replaceChildren('live updates interrupted (', text(describe(e)), '); retrying');
                await sleep(e instanceof ApiError && e.status === 503 ? 5000 : 2000);
            }
        }
    }

    function start() {
        showLogin(false);
        state.generation++;
        state.since = null;
        refresh();
        follow(state.generation);
    }

    // tests/ui/grants.mjs loads this file without a browser and reads the
    // pure builders here; a page never defines this hook.
    if (typeof globalThis.__provisoInboxTest === 'object' && globalThis.__provisoInboxTest !== null) {
        Object.assign(globalThis.__provisoInboxTest, { grantsSection, grantsHeadline, grantsSummary, noFindingsText,
            renderDetail, rulePattern, findingsCount, curlLine });
    }

    document.addEventListener('DOMContentLoaded', () => {
        $('token-use').addEventListener('click', useToken);
        $('token').addEventListener('keydown', (e) => {
            if (e.key === 'Enter') {
                useToken();
            }
        });
        $('forget').addEventListener('click', () => forget(''));
        $('show-decided').addEventListener('change', () => refresh());
        if (token() === null) {
            showLogin(true);
        } else {
            start();
        }
    });
}());
