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
        parts.push(shq(scheme + '://' + host + ':' + port + target));
        return parts.join(' ');
    }

    function statusBadge(status) {
        return el('span', { class: 'status status-' + String(status), text: String(status).toUpperCase() });
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

    function pre(s, cls) {
        return el('pre', { class: cls, text: s === '' ? '(empty)' : s });
    }

    // ---------------------------------------------------------------------
    // Sandboxes
    // ---------------------------------------------------------------------

    async function loadSandboxes() {
        const list = await api('GET', '/v1/sandboxes');
        const sandboxes = list.sandboxes || [];
        const counts = await Promise.all(sandboxes.map(async (sb) => {
            try {
                const p = await api('GET', '/v1/sandboxes/' + enc(sb.name) + '/proposals?status=pending');
                return (p.chunks || []).length;
            } catch (e) {
                return null;
            }
        }));
        sandboxes.forEach((sb, i) => { sb.pending = counts[i]; });
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
        const q = $('show-decided').checked ? '' : '?status=pending';
        let list;
        try {
            list = await api('GET', '/v1/sandboxes/' + enc(state.sandbox) + '/proposals' + q);
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
        const chunks = list.chunks || [];
        if (chunks.length === 0) {
            ul.append(el('li', { class: 'hint', text: 'Nothing to review.' }));
        }
        for (const c of chunks) {
            const b = el('button', {
                type: 'button', class: 'proposal', 'aria-pressed': String(c.chunk_id === state.chunk),
                onclick: () => selectChunk(c.chunk_id),
            },
            statusBadge(c.status), ' ',
            el('span', { class: 'rule', text: c.rule_name }), ' ',
            el('span', { class: 'endpoint', text: c.host + ':' + c.port }), ' ',
            el('span', { class: 'validation', text: (c.validation_result || '').split('\n')[0] }));
            ul.append(el('li', { 'data-chunk': c.chunk_id }, b));
        }
    }

    function selectChunk(id) {
        state.chunk = id;
        state.rejecting = false;
        refresh();
    }

    // ---------------------------------------------------------------------
    // One proposal: its evidence and the decision
    // ---------------------------------------------------------------------

    function findingsTable(prover) {
        const rows = [];
        for (const f of (prover && prover.findings) || []) {
            for (const p of f.paths || []) {
                rows.push({ category: f.category, path: p });
            }
        }
        if (rows.length === 0) {
            return null;
        }
        const table = el('table', { id: 'findings', class: 'findings' },
            el('caption', { text: 'Findings: each path the change opens, with its witness' }));
        const head = el('tr', {});
        for (const h of ['Category', 'Binary', 'Host:port', 'Method', 'Path', 'Rule', 'Credentials', 'Witness']) {
            head.append(el('th', { scope: 'col', text: h }));
        }
        table.append(el('thead', {}, head));
        const body = el('tbody', {});
        for (const r of rows) {
            const p = r.path;
            const w = p.witness || {};
            const tr = el('tr', {},
                el('td', { text: r.category }),
                el('td', { text: p.binary || w.binary || '' }),
                el('td', { text: (p.host || w.host || '*') + ':' + (p.port || w.port || '') }),
                el('td', { text: w.method || p.method || 'any' }),
                el('td', { text: (w.path || '') + (w.query ? '?' + w.query : '') }),
                el('td', { text: p.rule || '' }),
                el('td', { text: (p.credentials || []).join(', ') || 'none' }),
                el('td', {}, el('code', { class: 'witness', text: curlLine(p.witness) || '(none)' })));
            body.append(tr);
        }
        table.append(body);
        return table;
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
            statusBadge(c.status)));

        const dl = el('dl', { class: 'facts' });
        dlRow(dl, 'Chunk', c.chunk_id, 'mono');
        dlRow(dl, 'Sandbox', state.sandbox);
        dlRow(dl, 'Status', c.status, 'chunk-status');
        dlRow(dl, 'Endpoint', c.host + ':' + c.port);
        dlRow(dl, 'Binary', c.binary);
        dlRow(dl, 'Proposed by', c.analysis_mode + ', confidence ' +
            Math.round((Number(c.confidence) || 0) * 100) + '%, seen ' + c.hit_count + ' time(s)');
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
        const table = findingsTable(prover);
        d.append(table || el('p', { id: 'no-findings', text: prover ? 'No new findings: the change grants nothing new.' :
            'No prover evidence for this proposal.' }));

        const creds = credentialsInScope(prover);
        d.append(el('h3', { text: 'Credentials in scope' }),
            el('p', { id: 'credentials', text: creds.length ? creds.join(', ') : 'none' }));

        d.append(el('h3', { text: 'Security notes' }),
            el('p', { id: 'security-notes', text: c.security_notes || 'none' }));

        if (ev.boundary) {
            const b = ev.boundary;
            d.append(el('h3', { text: 'Auto-approval boundary' }),
                pre(b.error ? 'error: ' + b.error : (b.validation_result || b.verdict || JSON.stringify(b)), 'boundary'));
        }

        d.append(el('h3', { text: 'Proposed rule' }), pre(JSON.stringify(c.proposed_rule, null, 2), 'rule-json'));
        d.append(el('h3', { text: 'Policy diff' }), pre(ev.diff || '', 'diff'));

        d.append(decisionBox(c));
    }

    function decisionBox(c) {
        const box = el('div', { class: 'decision', role: 'group', 'aria-label': 'Decision' });
        box.append(el('h3', { text: 'Decision' }));
        const canApprove = c.status === 'pending' || c.status === 'rejected';
        const canReject = c.status === 'pending' || c.status === 'approved';
        if (canApprove) {
            box.append(el('button', { type: 'button', id: 'approve', class: 'approve',
                onclick: () => decide(c, 'approve') }, 'Approve'), ' ');
        }
        if (canReject && !state.rejecting) {
            box.append(el('button', { type: 'button', id: 'reject', class: 'reject',
                onclick: () => { state.rejecting = true; renderDetail(c); $('reason').focus(); } },
            c.status === 'approved' ? 'Reject (remove the grant)' : 'Reject'));
        }
        if (canReject && state.rejecting) {
            box.append(el('label', { for: 'reason', text: 'Reason for rejecting (required)' }),
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
        try {
            const out = await api('POST', path, body);
            state.rejecting = false;
            say('ok', (what === 'approve' ? 'Approved' : 'Rejected') + ' rule ' + c.rule_name +
                (out.policy_version ? '; the effective policy is now revision ' + out.policy_version : '') + '.');
        } catch (e) {
            say('error', describe(e));
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
