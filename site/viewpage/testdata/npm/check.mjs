// Loads view pages in headless Chromium, runs axe-core on each, records
// every request and console message, takes screenshots and returns what the
// DOM shows. Usage: node check.mjs <job.json>; prints a JSON report.
// job: {chrome, outDir, pages: [{name, url, width, height, screenshot}]}
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));

const browser = await puppeteer.launch({
  executablePath: job.chrome,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const report = [];
try {
  for (const p of job.pages) {
    const page = await browser.newPage();
    await page.setViewport({ width: p.width, height: p.height, deviceScaleFactor: 1 });
    const requests = [];
    const console_ = [];
    page.on('request', (r) => requests.push(r.url()));
    // Bytes as transferred (encoded), from the network events.
    let bytes = 0;
    const net = await page.createCDPSession();
    await net.send('Network.enable');
    net.on('Network.loadingFinished', (e) => { bytes += e.encodedDataLength; });
    page.on('console', (m) => console_.push(m.type() + ': ' + m.text()));
    page.on('pageerror', (e) => console_.push('pageerror: ' + e.message));
    const resp = await page.goto(p.url, { waitUntil: 'networkidle0' });
    // Scroll through so lazy images load, then back to the top.
    await page.evaluate(async () => {
      for (let y = 0; y < document.body.scrollHeight; y += 600) { window.scrollTo(0, y); await new Promise((r) => setTimeout(r, 20)); }
      window.scrollTo(0, 0);
    });
    // Lazy images passed too quickly: bring each into view until it loads.
    await page.evaluate(async () => {
      for (const i of document.images) {
        if (i.closest('.lb') || (i.complete && i.currentSrc)) continue;
        i.scrollIntoView();
        for (let n = 0; n < 100 && !(i.complete && i.currentSrc); n++) await new Promise((r) => setTimeout(r, 50));
      }
      window.scrollTo(0, 0);
    });
    await page.waitForNetworkIdle({ idleTime: 200 }).catch(() => {});
    // axe runs in an isolated world so the page's CSP (no script) does not block it.
    const frames = page.frames();
    const texts = [];
    const overflow = [];
    for (const f of frames) {
      texts.push(await f.evaluate(() => document.body ? document.body.innerText : ''));
      overflow.push(await f.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth));
    }
    const cdp = await page.createCDPSession();
    const { frameTree } = await cdp.send('Page.getFrameTree');
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'axe', grantUniveralAccess: true });
    const axeResult = await cdp.send('Runtime.evaluate', {
      contextId: executionContextId, awaitPromise: true, returnByValue: true,
      expression: axeSource + `;axe.run(document,{resultTypes:['violations'],iframes:false}).then(r=>r.violations.map(v=>({id:v.id,impact:v.impact,help:v.help,nodes:v.nodes.map(n=>n.target.join(' ')).slice(0,5)})))`,
    });
    const images = await page.evaluate(() => [...document.images].filter((i) => !i.closest('.lb')).map((i) => ({ src: i.currentSrc, complete: i.complete, natural: i.naturalWidth, w: i.getAttribute('width'), h: i.getAttribute('height') })));
    const scrollW = await page.evaluate(() => document.documentElement.scrollWidth);
    // (Images of the :target lightbox are not shown, so not loaded.)
    // DOM facts of the top frame: its language and alternates, every link
    // and resource that leaves the page's origin (tel: and mailto: too),
    // the order of the first plan and the first table, images with srcset,
    // and tables wider than their box.
    const dom = await page.evaluate(() => {
      const off = [];
      const check = (u) => { try { const x = new URL(u, location.href); if (x.origin !== location.origin) off.push(x.href); } catch (e) { off.push(u); } };
      document.querySelectorAll('a[href]').forEach((a) => check(a.getAttribute('href')));
      document.querySelectorAll('img').forEach((i) => { check(i.getAttribute('src')); (i.getAttribute('srcset') || '').split(',').forEach((c) => { const u = c.trim().split(/\s+/)[0]; if (u) check(u); }); });
      document.querySelectorAll('link[href]:not([rel=icon])').forEach((l) => check(l.getAttribute('href')));
      document.querySelectorAll('iframe[src],source[src],video,audio,object,embed').forEach((e) => off.push(e.outerHTML.slice(0, 80)));
      const plan = document.querySelector('.plan img');
      const table = document.querySelector('table');
      return {
        lang: document.documentElement.lang,
        hreflang: [...document.querySelectorAll('link[rel=alternate][hreflang]')].map((l) => l.hreflang + ' ' + l.href),
        offOrigin: off,
        planFirst: !!plan && (!table || !!(plan.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING)),
        plans: document.querySelectorAll('.plan img').length,
        srcset: [...document.images].filter((i) => i.srcset).length,
        wideTables: [...document.querySelectorAll('table')].filter((t) => t.scrollWidth > t.parentElement.clientWidth + 0.5).map((t) => (t.caption ? t.caption.innerText : '') + ' ' + t.scrollWidth + '>' + t.parentElement.clientWidth),
      };
    });
    if (p.screenshot) await page.screenshot({ path: p.screenshot, fullPage: true });
    // The top of the page as well (the README's pictures).
    if (p.screenshot && p.clip) await page.screenshot({ path: p.screenshot.replace(/\.png$/, '-top.png'), clip: { x: 0, y: 0, width: p.width, height: p.clip } });
    let pdfPages = 0;
    if (p.pdf) {
      await page.emulateMediaType('print');
      await page.pdf({ path: p.pdf, format: 'Letter', printBackground: false });
      pdfPages = 1;
    }
    report.push({
      name: p.name, status: resp.status(), headers: resp.headers(), requests, console: console_,
      text: texts.join('\n'), frames: frames.length, overflow, images, scrollWidth: scrollW, dom, pdf: pdfPages ? p.pdf : '', bytes,
      axe: axeResult.result.value, axeError: axeResult.exceptionDetails ? JSON.stringify(axeResult.exceptionDetails).slice(0, 500) : '',
    });
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report));
