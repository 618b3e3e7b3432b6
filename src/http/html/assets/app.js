// Starport dashboard: small progressive enhancements. Every page works without this file;
// it adds copy buttons, the live top-up link and QR code, and refreshes orders in progress.
// Served as a file from our origin (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';
  document.documentElement.classList.add('js');

  // ---- Phones: the navigation and the account fold into a menu behind the "Menu" button ----
  var menuToggle = document.querySelector('.menu-toggle');
  var siteMenu = document.getElementById('site-menu');
  if (menuToggle && siteMenu) {
    var setMenu = function (open) {
      menuToggle.setAttribute('aria-expanded', String(open));
      siteMenu.classList.toggle('is-open', open);
    };
    menuToggle.hidden = false;
    menuToggle.addEventListener('click', function () {
      setMenu(menuToggle.getAttribute('aria-expanded') !== 'true');
    });
    document.addEventListener('keydown', function (event) {
      if (event.key === 'Escape' && menuToggle.getAttribute('aria-expanded') === 'true') {
        setMenu(false);
        menuToggle.focus();
      }
    });
  }

  var announcer = document.createElement('div');
  announcer.className = 'visually-hidden';
  announcer.setAttribute('aria-live', 'polite');
  document.body.appendChild(announcer);
  function announce(message) {
    announcer.textContent = '';
    setTimeout(function () {
      announcer.textContent = message;
    }, 50);
  }

  // ---- Copy buttons: <button data-copy="element-id" hidden> ----
  function copyText(text, source) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).then(
        function () {
          return true;
        },
        function () {
          return fallback();
        },
      );
    }
    return Promise.resolve(fallback());
    function fallback() {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch (e) {
        ok = false;
      }
      document.body.removeChild(area);
      if (source && source.focus) source.focus();
      return ok;
    }
  }

  function initCopyButtons(root) {
    root.querySelectorAll('[data-copy]').forEach(function (button) {
      if (button.dataset.copyReady) return;
      button.dataset.copyReady = '1';
      button.hidden = false;
      button.addEventListener('click', function () {
        var target = document.getElementById(button.dataset.copy);
        if (!target) return;
        var text = target.tagName === 'INPUT' ? target.value : target.textContent;
        var label = button.querySelector('.copy-label') || button;
        copyText(text.trim(), button).then(function (ok) {
          label.textContent = ok ? 'Copied' : 'Copy failed';
          announce(ok ? 'Copied to the clipboard.' : 'Could not copy. Select the text and copy it.');
          setTimeout(function () {
            label.textContent = 'Copy';
          }, 2000);
        });
      });
    });
  }
  initCopyButtons(document);
  document.querySelectorAll('[data-no-js]').forEach(function (el) {
    el.hidden = true;
  });

  // Select a whole read-only key on focus: one keystroke to copy it by hand.
  document.querySelectorAll('input[readonly].copy-value').forEach(function (input) {
    input.addEventListener('focus', function () {
      input.select();
    });
  });

  // ---- Live top-up: the amount updates the ton:// link and the QR code as you type ----
  var form = document.querySelector('[data-transfer-form]');
  if (form) {
    var input = form.querySelector('#amount');
    var error = form.querySelector('#amount-error');
    var link = document.getElementById('transfer-link');
    var uri = document.getElementById('transfer-uri');
    var qr = document.getElementById('transfer-qr');
    // TON (9 decimals) or USDT (6 decimals, a jetton transfer): the form says which.
    var decimals = Number(form.dataset.decimals || 9);
    var unit = form.dataset.unit || 'TON';
    var jetton = form.dataset.jetton;
    var scale = 10n ** BigInt(decimals);
    var MAX = (jetton ? 10000000n : 1000000n) * scale;
    var timer;

    var toUnits = function (text) {
      var t = text.trim().replace(',', '.');
      if (t === '') return { ok: true, value: null, text: '' };
      var m = new RegExp('^(\\d+)(?:\\.(\\d{1,' + decimals + '}))?$').exec(t);
      if (!m) return { ok: false, message: 'Enter an amount in ' + unit + ', like 25 or ' + (jetton ? '12.5' : '2.5') + ', with at most ' + decimals + ' decimal places.' };
      var n = BigInt(m[1]) * scale + BigInt((m[2] || '').padEnd(decimals, '0'));
      if (n <= 0n) return { ok: false, message: 'Enter an amount greater than 0.' };
      if (n > MAX) return { ok: false, message: 'Enter at most ' + MAX / scale + ' ' + unit + '.' };
      return { ok: true, value: n, text: t };
    };

    var update = function () {
      var parsed = toUnits(input.value);
      error.hidden = parsed.ok;
      error.textContent = parsed.ok ? '' : parsed.message;
      if (parsed.ok) input.removeAttribute('aria-invalid');
      else input.setAttribute('aria-invalid', 'true');
      // A wrong amount leaves none in the link and the QR code (as the server renders it): the
      // wallet then asks for it, rather than offering the last valid amount typed.
      var value = parsed.ok ? parsed.value : null;
      var params = (jetton ? 'jetton=' + jetton + '&' : '') + (value !== null ? 'amount=' + value + '&' : '') + 'text=' + encodeURIComponent(form.dataset.memo);
      var href = 'ton://transfer/' + form.dataset.address + '?' + params;
      link.setAttribute('href', href);
      uri.textContent = href;
      var query = [];
      if (jetton) query.push('asset=usdt');
      if (value !== null) query.push('amount=' + encodeURIComponent(parsed.text));
      qr.src = '/top-up/qr.svg' + (query.length ? '?' + query.join('&') : '');
      var url = new URL(window.location.href);
      if (value !== null) url.searchParams.set('amount', parsed.text);
      else url.searchParams.delete('amount');
      window.history.replaceState(null, '', url);
    };
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(update, 150);
    });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      update();
    });
  }

  // ---- Overview: the last 30 days as charts (uPlot, served by us); the data is in data-chart ----
  var chartRoot = document.querySelector('[data-chart]');
  if (chartRoot && window.uPlot) {
    var U = window.uPlot;
    var d = JSON.parse(chartRoot.dataset.chart);
    // Amounts come as exact decimal strings; a chart only needs them to draw. A page draws only
    // the series it has (the console's home has no balance series).
    var tons = function (list) {
      return (list || []).map(Number);
    };
    var bar = function (align) {
      return U.paths.bars({ size: [0.45, 24], align: align });
    };
    var definitions = {
      orders: {
        series: [
          {},
          { label: 'Delivered', stroke: '#18703a', fill: 'rgba(24, 112, 58, 0.45)', paths: bar(-1), points: { show: false } },
          { label: 'Failed', stroke: '#b42318', fill: 'rgba(180, 35, 24, 0.45)', paths: bar(1), points: { show: false } },
        ],
        data: [d.days, d.delivered, d.failed],
      },
      spent: {
        series: [{}, { label: 'TON spent', stroke: '#4338ca', fill: 'rgba(67, 56, 202, 0.35)', paths: bar(0), points: { show: false } }],
        data: [d.days, tons(d.spent)],
      },
      balance: {
        series: [{}, { label: 'Available, TON', stroke: '#4338ca', width: 2, paths: U.paths.stepped({ align: 1 }), points: { show: false } }],
        data: [d.days, tons(d.balance)],
      },
    };
    var charts = [];
    chartRoot.querySelectorAll('[data-series]').forEach(function (el) {
      var definition = definitions[el.dataset.series];
      if (!definition) return;
      var options = {
        width: el.clientWidth,
        height: 180,
        tzDate: function (ts) {
          return U.tzDate(new Date(ts * 1000), 'Etc/UTC');
        },
        scales: {
          x: { time: true },
          y: {
            range: function (u, min, max) {
              return [0, max > 0 ? max * 1.1 : 1];
            },
          },
        },
        axes: [
          { stroke: '#525c6e', grid: { stroke: '#eef0f3' } },
          { stroke: '#525c6e', grid: { stroke: '#eef0f3' }, size: 48 },
        ],
        series: definition.series,
      };
      charts.push({ plot: new U(options, definition.data, el), el: el });
    });
    var resizeTimer;
    window.addEventListener('resize', function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        charts.forEach(function (c) {
          c.plot.setSize({ width: c.el.clientWidth, height: 180 });
        });
      }, 100);
    });
  }

  // ---- Order page: follow an order in progress until it is final ----
  var schedule = function (region) {
    var delay = Number(region.dataset.refresh);
    if (!delay) return;
    setTimeout(function () {
      fetch(window.location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then(function (response) {
          if (!response.ok || response.redirected) return null;
          return response.text();
        })
        .then(function (text) {
          if (!text) return schedule(region);
          var next = new DOMParser().parseFromString(text, 'text/html').getElementById('order-live');
          if (!next) return schedule(region);
          if (next.innerHTML !== region.innerHTML) {
            var adopted = document.importNode(next, true);
            region.replaceWith(adopted);
            initCopyButtons(adopted);
            if (adopted.dataset.status !== region.dataset.status) {
              var status = document.getElementById('status-announcer');
              if (status) status.textContent = 'Order status: ' + adopted.dataset.statusLabel;
            }
            region = adopted;
          }
          schedule(region);
        })
        .catch(function () {
          schedule(region);
        });
    }, delay);
  };
  var live = document.getElementById('order-live');
  if (live) schedule(live);
})();

// ---- Statements: "Print or save as PDF" (the print stylesheet in app.css lays it out on A4) ----
(function () {
  'use strict';
  var buttons = document.querySelectorAll('[data-print]');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].hidden = false;
    buttons[i].addEventListener('click', function () {
      window.print();
    });
  }
})();
