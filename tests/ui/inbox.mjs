// SPDX-License-Identifier: Apache-2.0
// inbox.mjs - drive the reviewer inbox (/ui/) in a real headless Chromium
// with playwright-core (run by tests/e2e/advisor_ui.sh, which starts the
// advisor, creates the sandbox and the first proposal, and installs
// playwright-core into the build tree).
//
// Environment: PV_UI_NODE (the npm prefix holding playwright-core),
// PV_UI_CHROMIUM, PV_UI_URL (the advisor's base URL), PV_UI_ADMIN (admin
// token), PV_UI_SANDBOX, PV_UI_SANDBOX_TOKEN, PV_UI_CHUNK (a pending chunk
// with findings), PV_UI_ARTIFACTS (screenshot directory), PV_UI_PROFILE (a
// fresh browser profile directory).
//
// Steps, each with a screenshot: the token prompt; a wrong token refused;
// the sandbox list; the proposal's evidence (what the change grants first,
// with breadth marks; findings with curl witnesses,
// credentials, notes, diff, revision); the credentials change under the
// reviewer and approving the stale evaluation is refused (412) with advice;
// approve, and the revision moves; a new proposal whose rule name and
// rationale carry markup arrives live and renders as text; reject with a
// reason. Prints "ok - ..." lines; exits 1 on the first failure.
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (k) => {
    const v = process.env[k];
    if (!v) {
        console.error(`inbox.mjs: ${k} is not set`);
        process.exit(2);
    }
    return v;
};
const NODE = env('PV_UI_NODE');
const CHROMIUM = env('PV_UI_CHROMIUM');
const BASE = env('PV_UI_URL');
const ADMIN = env('PV_UI_ADMIN');
const SB = env('PV_UI_SANDBOX');
const SB_TOKEN = env('PV_UI_SANDBOX_TOKEN');
const CHUNK = env('PV_UI_CHUNK');
const ART = env('PV_UI_ARTIFACTS');
const PROFILE = env('PV_UI_PROFILE');

const require = createRequire(path.join(NODE, 'package.json'));
const { chromium } = require('playwright-core');

const XSS = '<img src=x onerror="window.__pwned=1;document.title=\'pwned\'">';
const XSS_RULE = 'gh_release<svg onload=window.__pwned=2>';
let step = 0;
let failed = false;
const cspViolations = [];

function ok(what) {
    console.log(`ok - ${what}`);
}
function fail(what) {
    console.log(`not ok - ${what}`);
    failed = true;
    throw new Error(what);
}
function check(cond, what) {
    if (cond) {
        ok(what);
    } else {
        fail(what);
    }
}

// Words split across two lines inside the cells of 'selector' (each word
// of each text node measured with a Range: a word drawn on two lines has
// client rects at two heights). Returns the broken words.
async function brokenWords(page, selector) {
    return page.evaluate((sel) => {
        const out = [];
        for (const cell of document.querySelectorAll(sel)) {
            const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n !== null; n = walk.nextNode()) {
                const re = /\S+/g;
                for (let m = re.exec(n.data); m !== null; m = re.exec(n.data)) {
                    const r = document.createRange();
                    r.setStart(n, m.index);
                    r.setEnd(n, m.index + m[0].length);
                    const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0)
                        .map((x) => Math.round(x.top)));
                    if (tops.size > 1) {
                        out.push(m[0]);
                    }
                }
            }
        }
        return out;
    }, selector);
}

async function shot(page, name) {
    step++;
    const file = path.join(ART, `${String(step).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    ok(`screenshot ${path.basename(file)}`);
}

// Wait until the text of 'selector' matches 're'; returns the text.
async function waitText(page, selector, re, what, timeout = 15000) {
    try {
        await page.waitForFunction(
            ([sel, src, flags]) => {
                const e = document.querySelector(sel);
                return e !== null && new RegExp(src, flags).test(e.textContent);
            },
            [selector, re.source, re.flags],
            { timeout },
        );
    } catch (e) {
        const got = await page.evaluate((sel) => {
            const el = document.querySelector(sel);
            return el === null ? '(no element)' : el.textContent;
        }, selector);
        fail(`${what}: ${selector} never matched ${re} (got ${JSON.stringify(got)})`);
    }
    const text = await page.textContent(selector);
    ok(what);
    return text;
}

async function adminApi(method, p, body) {
    const resp = await fetch(`${BASE}${p}`, {
        method,
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: resp.status, body: await resp.json() };
}

async function submitProposal(ruleName, rationale) {
    const body = {
        intent_summary: rationale,
        operations: [{
            addRule: {
                ruleName,
                rule: {
                    endpoints: [{
                        host: 'uploads.github.com', port: 443, protocol: 'rest', enforcement: 'enforce',
                        rules: [{ allow: { method: 'POST', path: '/repos/o/r/releases/**' } }],
                    }],
                    binaries: [{ path: '/usr/bin/curl' }],
                },
            },
        }],
    };
    const resp = await fetch(`${BASE}/v1/sandboxes/${SB}/proposals`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SB_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
    });
    const j = await resp.json();
    check(resp.status === 202 && j.accepted_chunks === 1, `submitted ${ruleName} (${resp.status})`);
    return j.accepted_chunk_ids[0];
}

// Submit one rule with the sandbox's token; its chunk id.
async function submitRule(ruleName, endpoints, binary) {
    const resp = await fetch(`${BASE}/v1/sandboxes/${SB}/proposals`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SB_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ intent_summary: `allow ${ruleName}`,
            operations: [{ addRule: { ruleName, rule: { endpoints, binaries: [{ path: binary }] } } }] }),
    });
    const j = await resp.json();
    check(resp.status === 202 && j.accepted_chunks === 1, `submitted ${ruleName} (${resp.status} ${JSON.stringify(j)})`);
    return j.accepted_chunk_ids[0];
}

async function main() {
    const ctx = await chromium.launchPersistentContext(PROFILE, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        viewport: { width: 1400, height: 1000 },
    });
    try {
        const page = ctx.pages()[0] || await ctx.newPage();
        page.on('console', (m) => {
            if (/Content.Security.Policy|Refused to/i.test(m.text())) {
                cspViolations.push(m.text());
            }
        });
        page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));

        // 1. The prompt; /ui redirects to /ui/.
        const resp = await page.goto(`${BASE}/ui`);
        check(page.url() === `${BASE}/ui/`, `/ui redirects to /ui/ (${page.url()})`);
        check(resp.headers()['content-security-policy'].includes("script-src 'self'"),
            'the page carries its CSP');
        await page.waitForSelector('#login:not([hidden])');
        check(await page.isVisible('#token'), 'the token prompt is shown');
        check(await page.evaluate(() => {
            const m = document.getElementById('main');
            return getComputedStyle(m).display === 'none' && m.getBoundingClientRect().height === 0;
        }), 'under the prompt the panes are not laid out (main is display: none)');
        for (const sel of ['#sandboxes-title', '#proposals-title', '#detail-title', '#show-decided']) {
            check(!(await page.isVisible(sel)), `no pane under the prompt: ${sel} is not visible`);
        }
        {
            const t = await page.textContent('#login');
            check(/DATA_DIR\/admin\.token/.test(t) && /--data-dir/.test(t) && /PROVISO_TOKEN_FILE/.test(t) &&
                /--token-file/.test(t), 'the prompt names the token file and how the CLI reads it');
        }
        await shot(page, 'token-prompt');

        // 2. A wrong token is refused and not kept.
        await page.fill('#token', 'not-the-admin-token-0123456789');
        await page.click('#token-use');
        await waitText(page, '#message', /401/, 'a wrong token: the 401 is shown');
        check(await page.evaluate(() => sessionStorage.length) === 0, 'a refused token is not kept');
        check(!(await page.isVisible('#main')) && !(await page.isVisible('#sandboxes-title')),
            'after a refusal no pane shows under the prompt');
        await shot(page, 'token-refused');

        // 3. The right token (typed, Enter): the sandbox list.
        await page.fill('#token', ADMIN);
        await page.press('#token', 'Enter');
        await waitText(page, `[data-sandbox="${SB}"] .pending`, /^1 pending$/, 'sandbox listed with 1 pending');
        await waitText(page, `[data-sandbox="${SB}"] .rev`, /^v1$/, 'effective revision v1 listed');
        check(await page.evaluate(() => document.cookie) === '', 'no cookie is set');
        check(await page.evaluate((t) => Object.keys(sessionStorage).length === 1 &&
            Object.values(sessionStorage)[0] === t, ADMIN), 'the token is in sessionStorage');
        check(await page.evaluate(() => localStorage.length) === 0, 'nothing in localStorage');
        check(!(await page.isVisible('#login')) && await page.isVisible('#main'),
            'with a token the prompt is gone and the panes are shown');
        await shot(page, 'sandboxes');

        // 4. The proposal's evidence.
        await page.click(`[data-sandbox="${SB}"] button`);
        await page.waitForSelector(`[data-chunk="${CHUNK}"] button`);
        await page.click(`[data-chunk="${CHUNK}"] button`);
        await page.waitForSelector('#findings tbody tr.path');
        const heads = await page.$$eval('#findings thead th', (ths) => ths.map((th) => th.textContent));
        check(heads.join('|') === 'Category|Binary|Host:port|Method|Rule pattern|Risk|Credentials',
            `findings columns: ${heads.join('|')} (the rule pattern and risk, the rule not repeated)`);
        const rows = await page.$$eval('#findings tbody tr.path', (trs) => trs.map((tr) =>
            [...tr.querySelectorAll('td')].map((td) => td.textContent)));
        check(rows.length >= 1, `findings table has ${rows.length} path(s)`);
        const cats = rows.map((r) => r[0]);
        check(cats.some((c) => /expansion|bypass/.test(c)), `finding categories: ${cats.join(', ')}`);
        check(rows.every((r) => r[4] === 'PUT /repos/o/r/contents/**'),
            `the path column shows the rule's pattern, not the witness: ${rows.map((r) => r[4]).join(' | ')}`);
        check(rows.every((r) => /^high \(github write_file\)$/.test(r[5])),
            `risk column as the CLI rates it: ${rows.map((r) => r[5]).join(' | ')}`);
        {
            const cap = await page.textContent('#findings-count');
            const nf = new Set(cats).size;
            const m = /^(\d+) findings?, (\d+) paths?:/.exec(cap);
            check(m !== null && Number(m[1]) === nf && Number(m[2]) === rows.length,
                `the caption counts what is shown: "${cap.split(':')[0]}" for ${nf} categor(ies), ${rows.length} row(s)`);
        }
        const witnesses = await page.$$eval('#findings tbody tr.witness code.witness', (cs) =>
            cs.map((c) => c.textContent));
        check(witnesses.length === rows.length, 'one witness line under each path');
        check(witnesses.every((w) => w.startsWith('curl ')), 'every witness is a curl line');
        check(witnesses.some((w) => /^curl -X PUT (--resolve \S+ )?'?https:\/\/api\.github\.com:443\/repos\/o\/r\/contents\//.test(w)),
            `a witness is the PUT the rule opens: ${witnesses.join(' | ')}`);
        check(rows.some((r) => r[2] === 'api.github.com:443'), 'host:port column');
        // No word is broken inside: the cells do not wrap anywhere, every
        // word of every cell sits on one line, the table fits its pane.
        check(await page.$$eval('#findings th, #findings td', (cs) => cs.every((c) => {
            const st = getComputedStyle(c);
            return st.overflowWrap !== 'anywhere' && st.wordBreak !== 'break-all' && st.wordBreak !== 'break-word';
        })), 'findings cells: no overflow-wrap: anywhere, no word-break');
        {
            const broken = await brokenWords(page, '#findings th, #findings tr.path td');
            check(broken.length === 0, `no word of the findings table is drawn on two lines (${broken.join(', ')})`);
            const fit = await page.$eval('#findings', (t) => [t.parentElement.scrollWidth, t.parentElement.clientWidth,
                [...t.querySelectorAll('thead th')].map((th) => Math.round(th.getBoundingClientRect().width)).join(',')]);
            check(fit[0] <= fit[1] + 1, `the findings table fits its pane at 1400 px (${fit[0]} <= ${fit[1]}; columns ${fit[2]})`);
            // the measure itself catches a mid-word break: force one on a
            // header cell (CSSOM, allowed by the CSP), measure, undo
            const forced = await page.evaluate(() => {
                const b = document.querySelector('#findings tbody tr.path td:first-child bdi');
                b.style.display = 'inline-block';
                b.style.width = '3ch';
                b.style.overflowWrap = 'anywhere';
                return b.textContent.length > 3;
            });
            const caught = await brokenWords(page, '#findings tbody tr.path td:first-child');
            await page.evaluate(() => {
                document.querySelector('#findings tbody tr.path td:first-child bdi').removeAttribute('style');
            });
            check(forced && caught.length > 0, `the measure sees a forced mid-word break (${caught.join(', ')})`);
        }
        // The rule is shown once: as the policy diff; its JSON is folded.
        check(await page.isVisible('#detail pre.diff') && !(await page.isVisible('#detail pre.rule-json')),
            'the rule is shown once (the diff; the submitted JSON folded away)');
        await waitText(page, '#detail .proposed-by', /confidence \d+% \(the proposer's estimate that the rule is wanted, not a safety score/,
            'confidence is explained where it is shown');
        await waitText(page, '#grants-headline',
            /^This change grants 1 (new|changed) unit: \/usr\/bin\/curl -> api\.github\.com:443 inspected, wide: writes; prover: \d+ new findings? \(/,
            'what the change grants comes first, as one sentence with the verdict');
        await waitText(page, '#grants li.grant .breadth',
            /^\[binary: exact, host: exact, route: inspected, methods: writes\]$/, 'the grant carries its breadth');
        check(await page.evaluate(() => {
            const g = document.getElementById('grants');
            const f = [...document.querySelectorAll('#detail h3')].find((h) => h.textContent === 'Findings');
            return g !== null && f !== undefined && (g.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
        }), 'the grants are above the findings');
        await waitText(page, '#credentials', /\bgh\b/, 'credentials in scope name gh');
        await waitText(page, '#security-notes', /./, 'security notes shown');
        await waitText(page, '#detail .validation-result', /^prover: \d+ new finding/, 'validation_result shown');
        await waitText(page, '#detail pre.diff', /\+\s+method: PUT\n\+\s+path: \/repos\/o\/r\/contents\/\*\*/,
            'policy diff shown (the PUT rule added)');
        // The rule merges into github_ro's endpoint: a hunk headed by where
        // it is, 'port: 443' (unchanged) context only, each line classed by
        // its mark (docs/advisor.md#diff).
        const diffLines = await page.evaluate(() => [...document.querySelectorAll('#detail pre.diff .line')]
            .map((e) => [e.className, e.textContent.replace(/\n$/, '')]));
        check(diffLines.length > 0 && diffLines[0][0] === 'line hunk' &&
            diffLines[0][1] === '@@ network_policies > github_ro > endpoints[api.github.com] @@',
        `the diff's hunk is headed by where it is (${JSON.stringify(diffLines[0])})`);
        check(diffLines.some(([c, t]) => c === 'line ctx' && t === '       port: 443') &&
            !diffLines.some(([, t]) => /^[-+]\s+port: 443$/.test(t)),
        'port: 443 is context, never removed and added');
        check(diffLines.some(([c, t]) => c === 'line del' && t === '-      access: read-only') &&
            diffLines.some(([c, t]) => c === 'line add' && t === '+          method: PUT'),
        'removed and added lines are marked as such');
        await waitText(page, '#detail .effective-revision', /^revision 1 /, 'current effective revision 1 shown');
        await waitText(page, '#detail .chunk-status', /^pending$/, 'status pending');
        await shot(page, 'proposal-evidence');

        // 5. The inputs move under the reviewer (an operator changes the
        // credentials): approving what was read is refused with 412, the page
        // says so and reloads the refreshed evaluation.
        const seen = await page.getAttribute('body', 'data-events');
        const put = await adminApi('PUT', `/v1/sandboxes/${SB}/credentials`, {
            credentials: 'credentials:\n  - {name: gh, type: github, target_hosts: [api.github.com, uploads.github.com]}\n'
                + '  - {name: gh2, type: github, target_hosts: [api.github.com]}\n',
        });
        check(put.status === 200, `operator changed the credentials (${put.status})`);
        await page.waitForFunction((s) => document.body.getAttribute('data-events') !== s, seen,
            { timeout: 20000 });
        ok('live: the credentials event reached the page');
        const posts = [];
        page.on('request', (rq) => {
            if (rq.method() === 'POST') {
                posts.push(rq.url());
            }
        });
        await page.click('#approve');
        await page.waitForSelector('#confirm');
        check(posts.length === 0, 'approve opens a confirm step: nothing is sent yet');
        await waitText(page, '#confirm-title', /^Approve rule ghw in sandbox sb1\?$/, 'the confirm step names the rule');
        await waitText(page, '#confirm pre.confirm-grants', /^[~+] \/usr\/bin\/curl -> api\.github\.com:443 inspected, .*PUT \/repos\/o\/r\/contents\/\*\*/,
            'the confirm step names what is granted');
        await waitText(page, '#confirm-findings', /^The prover found \d+ findings?, \d+ paths? \(capability_expansion/,
            'the confirm step repeats the findings count');
        await page.click('#approve-cancel');
        check(await page.$('#confirm') === null && posts.length === 0, 'cancel closes it and sends nothing');
        await page.click('#approve');
        await page.waitForSelector('#confirm');
        await shot(page, 'approve-confirm');
        check(posts.length === 0, 'still nothing sent before the confirm');
        await page.click('#approve-confirm');
        await waitText(page, '#message', /changed since you read it.*review it again/,
            'a stale review token: the page tells the reviewer to review again');
        await waitText(page, '#detail .chunk-status', /^pending$/, 'still pending after the 412');
        await waitText(page, '#decision-refused', /^The evaluation changed since you read it/,
            'the 412 is shown next to the decision box');
        await waitText(page, '#credentials', /\bgh2\b/, 'the refreshed evidence names the new credential');
        await shot(page, 'stale-review-token');

        // 6. Approve (keyboard: focus the button, press Enter).
        await page.focus('#approve');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#confirm');
        check(await page.evaluate(() => document.activeElement && document.activeElement.id) === 'approve-confirm',
            'the confirm button has the focus');
        const before = posts.length;
        await page.keyboard.press('Enter');
        await waitText(page, '#message', /^Approved rule ghw; the effective policy is now revision 2\.$/,
            'approve: the new revision is reported');
        await waitText(page, `[data-sandbox="${SB}"] .rev`, /^v2$/, 'sandbox list: revision v2');
        await waitText(page, `[data-sandbox="${SB}"] .pending`, /^0 pending$/, 'sandbox list: 0 pending');
        await page.check('#show-decided');
        await page.waitForSelector(`#detail[data-chunk="${CHUNK}"][data-status="approved"]`);
        await waitText(page, '#detail .effective-revision', /^revision 2 /, 'detail: effective revision 2');
        await waitText(page, '#detail .chunk-status', /^approved$/, 'detail: status approved');
        check(posts.length === before + 1 && /\/approve$/.test(posts[posts.length - 1]),
            'one POST .../approve went out after the confirm');
        await shot(page, 'approved');

        // 7. A proposal arrives while the page is open: the long-poll shows it
        // without a reload; its markup-laden rationale stays text.
        const marker = await page.evaluate(() => { window.__marker = 42; return window.__marker; });
        const xssChunk = await submitProposal(XSS_RULE, `upload ${XSS} please`);
        await waitText(page, `[data-sandbox="${SB}"] .pending`, /^1 pending$/, 'live: the new proposal is counted',
            20000);
        await page.waitForSelector(`[data-chunk="${xssChunk}"] button`, { timeout: 20000 });
        check(await page.evaluate(() => window.__marker) === marker, 'live: no page reload happened');
        await page.click(`[data-chunk="${xssChunk}"] button`);
        const rationale = await waitText(page, '#detail .rationale', /<img src=x onerror=/, 'the rationale renders as text');
        check(rationale.includes(XSS), 'the rationale is shown verbatim');
        await waitText(page, '#detail h2 .rule', /^gh_release<svg onload=window\.__pwned=2>$/,
            'the rule name renders as text');
        check(await page.evaluate(() => document.querySelectorAll('svg').length) === 0, 'no <svg> element exists');
        check(await page.evaluate(() => document.querySelectorAll('img').length) === 0, 'no <img> element exists');
        check(await page.evaluate(() => document.querySelectorAll('[onerror]').length) === 0,
            'no element carries an onerror attribute');
        check(await page.evaluate(() => window.__pwned === undefined && document.title !== 'pwned'),
            'the injected handler never ran');
        // Every string the page wrote is its own left-to-right isolate, so a
        // bidi control in agent text cannot reorder its neighbours (issue #22).
        check(await page.evaluate(() => {
            const b = document.querySelector('#detail h2 .rule > bdi[dir="ltr"]');
            return b !== null && getComputedStyle(b).unicodeBidi === 'isolate';
        }), 'the rule name is a <bdi dir="ltr"> isolate');
        {
            const loose = await page.evaluate(() => {
                const out = [];
                for (const root of document.querySelectorAll('#detail, #proposals, #sandboxes')) {
                    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
                    for (let n = walk.nextNode(); n !== null; n = walk.nextNode()) {
                        if (n.textContent.trim() !== '' && n.parentElement.closest('bdi[dir="ltr"]') === null) {
                            out.push(n.textContent);
                        }
                    }
                }
                return out;
            });
            check(loose.length === 0, `every text run in the inbox is isolated (${JSON.stringify(loose.slice(0, 5))})`);
        }
        await shot(page, 'xss-as-text');

        // 8. Reject: a reason is required, then the chunk is rejected.
        await page.click('#reject');
        await page.waitForSelector('#reason');
        await page.click('#reject-confirm');
        await waitText(page, '#message', /Give a reason/, 'reject without a reason is refused by the page');
        check(await page.isVisible(`#detail[data-status="pending"]`), 'still pending');
        check(!posts.some((u) => u.endsWith('/reject')), 'no POST .../reject without a reason');
        await shot(page, 'reject-reason');
        await page.fill('#reason', 'too broad: <b>releases</b> are not needed');
        await page.click('#reject-confirm');
        await waitText(page, '#message', /^Rejected rule gh_release<svg onload=window\.__pwned=2>\.$/,
            'reject reported');
        await page.waitForSelector(`#detail[data-chunk="${xssChunk}"][data-status="rejected"]`);
        await waitText(page, '#detail .rejection-reason', /^too broad: <b>releases<\/b> are not needed$/,
            'the rejection reason is shown as text');
        check(await page.evaluate(() => document.querySelectorAll('#detail b').length) === 0,
            'no <b> element from the reason');
        {
            // a longer category (credential_reach_expansion): still no word
            // broken, and the table still fits its pane
            const broken = await brokenWords(page, '#findings th, #findings tr.path td');
            check(broken.length === 0, `second table: no word drawn on two lines (${broken.join(', ')})`);
            const fit = await page.$eval('#findings', (t) => [t.parentElement.scrollWidth, t.parentElement.clientWidth]);
            check(fit[0] <= fit[1] + 1, `second table fits its pane (${fit[0]} <= ${fit[1]})`);
        }
        await waitText(page, `[data-sandbox="${SB}"] .rev`, /^v2$/, 'reject of a pending chunk keeps revision v2');
        await shot(page, 'rejected');

        // 9. A wide grant in auto mode: no finding, yet outside the
        // auto-approval envelope, so it waits; the page shows the grant
        // with its breadth first and the envelope's note.
        check((await adminApi('PUT', `/v1/sandboxes/${SB}/settings/proposal_approval_mode`,
            { value: 'auto' })).status === 200, 'auto mode');
        const wide = await submitRule('paste', [{ host: '**.pastebin.com', port: 443, access: 'full' }],
            '/usr/bin/**');
        await page.waitForSelector(`[data-chunk="${wide}"] button`, { timeout: 20000 });
        await page.click(`[data-chunk="${wide}"] button`);
        await page.waitForSelector(`#detail[data-chunk="${wide}"][data-status="pending"]`);
        await waitText(page, '#grants-headline', /^This change grants 1 new unit: \/usr\/bin\/\*\* -> \*\*\.pastebin\.com:443 opaque/,
            'the wide grant comes first');
        await waitText(page, '#envelope-note', /^outside the auto-approval envelope \(exact_binary\)/,
            'the envelope note names the clause');
        check(!(await page.textContent('#detail')).includes('nothing new'), "never 'nothing new' beside a grant");
        await shot(page, 'wide-grant-pending');
        // its confirm step repeats how wide it is and the envelope's note
        await page.click('#approve');
        await page.waitForSelector('#confirm');
        await waitText(page, '#confirm pre.confirm-grants',
            /\[binary: glob, host: any-depth, route: opaque, methods: all\]\n {6}wide: any binary under \/usr\/bin, any subdomain of pastebin\.com at any depth, all traffic, not inspected$/,
            'the confirm step shows the breadth marks and words');
        await waitText(page, '#confirm-envelope', /^outside the auto-approval envelope \(exact_binary\)/,
            'the confirm step shows the envelope note');
        await shot(page, 'wide-grant-confirm');
        await page.click('#approve-cancel');

        // 9b. A narrow grant in auto mode: approved by the envelope, and
        // marked so in the list and the detail (never like a reviewer's).
        const narrow = await submitRule('docs_std', [{ host: 'docs.rust-lang.org', port: 443, protocol: 'rest',
            enforcement: 'enforce', rules: [{ allow: { method: 'GET', path: '/std/**' } }] }], '/usr/bin/curl');
        await page.waitForSelector(`[data-chunk="${narrow}"] button`, { timeout: 20000 });
        await page.click(`[data-chunk="${narrow}"] button`);
        await page.waitForSelector(`#detail[data-chunk="${narrow}"][data-status="approved"]`, { timeout: 20000 });
        await waitText(page, '#detail-title .status', /^APPROVED \(AUTO\)$/, 'the auto-approval is marked in the detail');
        await waitText(page, `li[data-chunk="${narrow}"] .status`, /^APPROVED \(AUTO\)$/, '... and in the list');
        await waitText(page, '#detail .chunk-status', /^approved automatically \(within the auto-approval envelope; no reviewer decided it\)$/,
            'the status row says no reviewer decided it');
        await shot(page, 'auto-approved');

        // 10. A narrowed suggestion: the sandbox was denied two GETs on one
        // host; a rule for every binary and every host under example.org is
        // offered the narrow rule they show, proved approvable, and the
        // reviewer approves it in one action.
        const den = await fetch(`${BASE}/v1/sandboxes/${SB}/denials`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${SB_TOKEN}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ dropped: 0, events: [
                { host: 'api.example.org', port: 443, binary: '/usr/bin/curl', stage: 'l7', method: 'GET', path: '/v1/items/7' },
                { host: 'api.example.org', port: 443, binary: '/usr/bin/curl', stage: 'l7', method: 'GET', path: '/v1/items/8' },
            ] }),
        });
        check(den.status === 202, `denials reported (${den.status})`);
        const broad = await submitRule('broad', [{ host: '*.example.org', port: 443 }], '/usr/bin/**');
        await page.waitForSelector(`[data-chunk="${broad}"] button`, { timeout: 20000 });
        await page.click(`[data-chunk="${broad}"] button`);
        await page.waitForSelector(`#detail[data-chunk="${broad}"] #approve-suggestion`);
        await waitText(page, '#detail pre.suggestion-grants',
            /^\+ \/usr\/bin\/curl -> api\.example\.org:443 inspected, GET \/v1\/items\/\*\*, HEAD \/v1\/items\/\*\*(  \[binary: exact, host: exact, route: inspected, methods: read-only\])?$/,
            'the suggestion is the denied binary, host and path prefix');
        await shot(page, 'suggestion');
        await page.click('#approve-suggestion');
        await page.waitForSelector('#confirm[data-action="approve-suggestion"]');
        check(!posts.some((u) => u.endsWith('/approve-suggestion')), 'the narrowed rule waits for its confirm step');
        await waitText(page, '#confirm pre.confirm-grants',
            /^\+ \/usr\/bin\/curl -> api\.example\.org:443 inspected, GET \/v1\/items\/\*\*, HEAD \/v1\/items\/\*\*(  \[binary: exact, host: exact, route: inspected, methods: read-only\])?$/,
            'the confirm step names the narrowed grant, not the proposed one');
        await shot(page, 'suggestion-confirm');
        await page.click('#approve-confirm');
        await waitText(page, '#message', /^Approved the narrowed rule for rule broad; the effective policy is now revision \d+\.$/,
            'the narrowed rule is approved');
        await page.waitForSelector(`#detail[data-chunk="${broad}"][data-status="approved"]`);
        await waitText(page, '#detail .validation-result', /^prover: no new findings$/, 'the approved rule proves empty');
        await shot(page, 'suggestion-approved');

        // 11. Suspended: a new credential on the host of the approved PUT
        // rule (step 6) changes what it grants; it is proved again, left out
        // of the policy and back in the inbox with both evidences.
        const put2 = await adminApi('PUT', `/v1/sandboxes/${SB}/credentials`, {
            credentials: 'credentials:\n  - {name: gh, type: github, target_hosts: [api.github.com, uploads.github.com]}\n'
                + '  - {name: gh2, type: github, target_hosts: [api.github.com]}\n'
                + '  - {name: deploy, type: github, target_hosts: [api.github.com]}\n',
        });
        check(put2.status === 200 && put2.body.suspended.includes(CHUNK),
            `the approved PUT rule is suspended (${JSON.stringify(put2.body)})`);
        await page.uncheck('#show-decided');
        await waitText(page, `[data-sandbox="${SB}"] .suspended`, /^1 suspended$/, 'the sandbox counts a suspended chunk',
            20000);
        await page.waitForSelector(`[data-chunk="${CHUNK}"] button`, { timeout: 20000 });
        await page.click(`[data-chunk="${CHUNK}"] button`);
        await page.waitForSelector(`#detail[data-chunk="${CHUNK}"][data-status="suspended"]`);
        check(!(await page.isVisible('#message')), 'the previous decision\'s message is gone with another proposal selected');
        await waitText(page, '#detail .suspension-reason', /^after the sandbox's credentials changed: new finding /, 'the reason is shown');
        await page.waitForSelector('#evidence-compare');
        await waitText(page, '#detail pre.validation-was', /new finding/, 'the evidence when approved');
        check(await page.isVisible('#approve') && await page.isVisible('#reject'),
            'a suspended chunk can be approved again or rejected');
        await shot(page, 'suspended');

        // 11b. A GraphQL mutation on the credentialed host: the grant names
        // the operation (never a method and path it does not have), the
        // finding is a capability expansion, and it waits for a reviewer.
        const gql = await submitRule('gh_gql', [{ host: 'api.github.com', port: 443, path: '/graphql',
            protocol: 'graphql', enforcement: 'enforce',
            rules: [{ allow: { operation_type: 'mutation', fields: ['createIssue'] } }] }], '/usr/bin/curl');
        await page.waitForSelector(`[data-chunk="${gql}"] button`, { timeout: 20000 });
        await page.click(`[data-chunk="${gql}"] button`);
        await page.waitForSelector(`#detail[data-chunk="${gql}"][data-status="pending"]`);
        await waitText(page, '#detail .grant-line', /GraphQL mutation fields createIssue/,
            'the GraphQL grant names the operation type and its field');
        await waitText(page, '#detail .validation-result', /capability_expansion/,
            'a new mutation on a credentialed host is a capability expansion');
        check(!(await page.textContent('#detail')).includes('nothing new'), "never 'nothing new' beside a GraphQL grant");
        await waitText(page, '#findings td.pattern', /^mutation \{createIssue\}$/,
            'the pattern column shows the GraphQL rule, not a method and path');
        await waitText(page, '#findings code.witness', /--data '\{"query":"mutation( \w+)? \{ createIssue \}"\}'/,
            'the witness carries the operation it would run');
        await shot(page, 'graphql-pending');

        // 12. Forget the token.
        await page.click('#forget');
        await page.waitForSelector('#login:not([hidden])');
        check(await page.evaluate(() => sessionStorage.length) === 0, 'forget clears sessionStorage');
        check(!(await page.isVisible('#main')) && !(await page.isVisible('#detail-title')),
            'after forgetting the token no pane shows under the prompt');
        await shot(page, 'forgotten');

        check(cspViolations.length === 0, `no CSP violation or page error (${cspViolations.join('; ')})`);
        console.log(`XSS_CHUNK=${xssChunk}`);
    } finally {
        await ctx.close();
    }
}

main().then(() => process.exit(failed ? 1 : 0), (e) => {
    if (!failed) {
        console.log(`not ok - ${e.message}`);
    }
    process.exit(1);
});
