// harn-mcp-mock report: draws the JSON in #harn-data. No network, no framework; every value from the
// data goes into the page as text (textContent), never as markup, so recorded tool output cannot
// inject anything into the page.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("harn-data").textContent);
  var root = document.getElementById("app");

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var key in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, key)) continue;
        var value = attrs[key];
        if (value === null || value === undefined || value === false) continue;
        if (key === "text") node.textContent = String(value);
        else if (key === "cls") node.className = value;
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function fmt(value, digits) {
    return value === null || value === undefined ? "-" : Number(value).toFixed(digits === undefined ? 3 : digits);
  }
  function profileLabel(profile) { return profile === "none" ? "no faults" : "faults " + profile; }
  function table(headers, rows, cls) {
    return el("table", { cls: cls || "data" }, [
      el("thead", null, [el("tr", null, headers.map(function (h) { return el("th", { text: h }); }))]),
      el("tbody", null, rows),
    ]);
  }
  function select(label, id, values, labels) {
    var options = [el("option", { value: "", text: "all" })].concat(values.map(function (v, i) {
      return el("option", { value: v, text: labels ? labels[i] : v });
    }));
    return el("label", null, [label, el("select", { id: id }, options)]);
  }
  function uniq(list) {
    var seen = {}, out = [];
    list.forEach(function (v) { if (!seen[v]) { seen[v] = true; out.push(v); } });
    return out;
  }
  function header(title, meta) {
    document.title = title;
    return el("header", null, [el("h1", { text: title })].concat(meta.map(function (m) {
      return el("div", { cls: "meta", text: m });
    })));
  }

  // --- the run report -----------------------------------------------------------------------
  function runView() {
    var trials = DATA.trials, details = DATA.details;
    var counts = {};
    DATA.outcomes.forEach(function (o) { counts[o] = 0; });
    trials.forEach(function (t) { counts[t.outcome] += 1; });
    var meta = [DATA.source];
    if (DATA.agent) meta.push("agent: " + DATA.agent.join(" "));
    if (DATA.options) meta.push("k " + DATA.options.k + ", seed " + DATA.options.seed);
    document.body.insertBefore(header(DATA.title, meta), root);

    var legend = el("div", { cls: "legend", id: "legend" }, DATA.outcomes.map(function (o) {
      return el("span", null, [el("i", { cls: "swatch o-" + o }), o + " " + counts[o]]);
    }).concat([el("span", null, [el("i", { cls: "swatch faulted", style: "background:#7d8594" }),
      "faults fired"])]));

    var worlds = uniq(trials.map(function (t) { return t.world; }));
    var tasks = uniq(trials.map(function (t) { return t.task; })).sort();
    var profiles = uniq(trials.map(function (t) { return t.profile; }));
    var filters = el("div", { cls: "filters" }, [
      select("world", "f-world", worlds),
      select("task", "f-task", tasks),
      select("fault profile", "f-profile", profiles, profiles.map(profileLabel)),
      select("outcome", "f-outcome", DATA.outcomes),
      el("span", { cls: "count", id: "shown" }),
    ]);
    root.appendChild(el("section", { id: "trials" }, [el("h2", { text: "Trials" }), legend, filters,
      el("div", { id: "grids" })]));
    var grids = document.getElementById("grids");
    var cells = [];
    profiles.forEach(function (profile) {
      var rows = [];
      var byRow = {};
      trials.forEach(function (t, i) {
        if (t.profile !== profile) return;
        var key = t.world + "/" + t.task;
        if (!byRow[key]) { byRow[key] = []; rows.push(key); }
        byRow[key].push(i);
      });
      var body = rows.map(function (key) {
        var rowCells = byRow[key].map(function (i) {
          var t = trials[i];
          var tip = key + " #" + t.index + ": " + t.outcome + (t.faults.length ? " (faults: " + t.faults.join(", ") + ")" : "");
          var cell = el("button", { cls: "cell o-" + t.outcome + (t.faults.length ? " faulted" : ""), title: tip,
            "aria-label": tip, "data-trial": i, onclick: function () { showTrial(i); } });
          cells.push(cell);
          return cell;
        });
        var first = trials[byRow[key][0]];
        return el("tr", { "data-world": first.world, "data-task": first.task }, [
          el("td", { cls: "task", text: key }), el("td", { cls: "cells" }, rowCells)]);
      });
      grids.appendChild(el("div", { cls: "grid-block", "data-profile": profile }, [
        el("h3", { text: profileLabel(profile) }), el("table", { cls: "grid" }, [el("tbody", null, body)])]));
    });

    function applyFilters() {
      var f = {
        world: document.getElementById("f-world").value, task: document.getElementById("f-task").value,
        profile: document.getElementById("f-profile").value, outcome: document.getElementById("f-outcome").value,
      };
      var shown = 0;
      cells.forEach(function (cell) {
        var t = trials[Number(cell.getAttribute("data-trial"))];
        var ok = (!f.world || t.world === f.world) && (!f.task || t.task === f.task) &&
          (!f.profile || t.profile === f.profile) && (!f.outcome || t.outcome === f.outcome);
        cell.classList.toggle("hidden", !ok);
        if (ok) shown += 1;
      });
      grids.querySelectorAll("tr").forEach(function (row) {
        row.classList.toggle("hidden", !row.querySelector(".cell:not(.hidden)"));
      });
      grids.querySelectorAll(".grid-block").forEach(function (block) {
        block.classList.toggle("hidden", !block.querySelector(".cell:not(.hidden)"));
      });
      document.getElementById("shown").textContent = shown + " of " + trials.length + " trials shown";
    }
    ["f-world", "f-task", "f-profile", "f-outcome"].forEach(function (id) {
      document.getElementById(id).addEventListener("change", applyFilters);
    });
    applyFilters();

    root.appendChild(passKSection());
    if (DATA.baseline) root.appendChild(baselineSection(DATA.baseline));
    var detail = el("aside", { id: "detail", role: "dialog", "aria-label": "trial" });
    document.body.appendChild(detail);

    function showTrial(i) {
      var t = trials[i], d = details[i];
      cells.forEach(function (c) { c.classList.toggle("selected", Number(c.getAttribute("data-trial")) === i); });
      detail.textContent = "";
      detail.appendChild(el("button", { cls: "close", text: "close ✕", onclick: function () {
        detail.classList.remove("open");
      } }));
      detail.appendChild(el("h2", { text: t.world + " / " + t.task + " / " + profileLabel(t.profile) + " / trial " + t.index }));
      var facts = [["outcome", t.outcome + (t.kinds.length > 1 ? " (" + t.kinds.join(", ") + ")" : "")],
        ["status", t.status], ["exit code", t.exit_code], ["run id", t.run_id], ["seed", t.seed],
        ["duration", t.duration_ms === null || t.duration_ms === undefined ? null : t.duration_ms + " ms"],
        ["virtual time", d.virtual_ms === null || d.virtual_ms === undefined ? null : d.virtual_ms + " ms"],
        ["faults fired", t.faults.join(", ") || null], ["infrastructure error", t.infra_error],
        ["agent error", t.agent_error], ["message", t.message], ["sessions", t.sessions],
        ["isolation", t.isolation], ["files", t.file]];
      detail.appendChild(el("dl", { cls: "kv" }, [].concat.apply([], facts.filter(function (f) {
        return f[1] !== null && f[1] !== undefined && f[1] !== "";
      }).map(function (f) { return [el("dt", { text: f[0] }), el("dd", { text: String(f[1]) })]; }))));
      if (t.stderr_tail) {
        detail.appendChild(el("h3", { text: "Agent stderr (its end)" }));
        detail.appendChild(el("pre", { cls: "mono stderr", text: t.stderr_tail }));
      }
      var total = d.calls_total === undefined ? d.calls.length : d.calls_total;
      detail.appendChild(el("h3", { text: "Tool calls (" + total + ")" }));
      if (d.calls_omitted) detail.appendChild(el("p", { cls: "empty", text: "showing the first and last " +
        d.calls.length / 2 + ": " + d.calls_omitted + " calls in between are in " + t.file + "/report.json and tape.ndjson" }));
      if (!d.calls.length) detail.appendChild(el("p", { cls: "empty", text: "no tool calls" }));
      else detail.appendChild(table(["t (ms)", "tool", "arguments", "result / error"], d.calls.map(function (c) {
        var answer = c.error !== undefined ? el("span", { cls: "error", text: "error " + c.error })
          : c.result !== undefined ? el("span", { cls: c.tool_error ? "error" : null, text: (c.tool_error ? "tool error " : "") + c.result })
          : el("span", { text: c.outcome || "" });
        return el("tr", { cls: "call" }, [el("td", { cls: "mono", text: c.t_ms }),
          el("td", null, [c.tool + " ", c.fault ? el("span", { cls: "pill fault", text: "fault " + c.fault }) : null,
            c.outcome && c.outcome !== "ok" ? el("span", { cls: "pill outcome", text: c.outcome }) : null]),
          el("td", { cls: "val mono", text: c.args }), el("td", { cls: "val mono" }, [answer])]);
      }), "data timeline"));
      detail.appendChild(el("h3", { text: "State changes (" + (d.diff.length + (d.diff_omitted || 0)) + ")" }));
      if (d.diff_omitted) detail.appendChild(el("p", { cls: "empty", text: "showing " + d.diff.length + ": " +
        d.diff_omitted + " more in " + t.file + "/state.json" }));
      if (!d.diff.length) detail.appendChild(el("p", { cls: "empty", text: "the state did not change" }));
      else detail.appendChild(table(["path", "role", "before", "after"], d.diff.map(function (row) {
        return el("tr", { cls: "role-" + row.role }, [el("td", { cls: "mono", text: row.path }),
          el("td", { text: row.role }), el("td", { cls: "val mono", text: row.old === null ? "(absent)" : row.old }),
          el("td", { cls: "val mono", text: row.new === null ? "(absent)" : row.new })]);
      }), "data diff"));
      if (d.failed_goals.length) {
        detail.appendChild(el("h3", { text: "Goals not met" }));
        d.failed_goals.forEach(function (g) { detail.appendChild(el("div", { cls: "mono", text: g })); });
      }
      if (d.forbidden.length) {
        detail.appendChild(el("h3", { text: "Forbidden states hit" }));
        d.forbidden.forEach(function (h) { detail.appendChild(el("div", { cls: "mono", text: h })); });
      }
      detail.classList.add("open");
    }
  }

  function passKSection() {
    var section = el("section", { id: "passk" }, [el("h2", { text: "pass^k by fault profile" })]);
    var charts = el("div", { cls: "charts" });
    uniq(DATA.groups.map(function (g) { return g.world; })).forEach(function (world) {
      var groups = DATA.groups.filter(function (g) { return g.world === world; });
      charts.appendChild(el("div", { cls: "chart" }, [el("h3", { text: world }), lineChart(groups)]));
    });
    section.appendChild(charts);
    function interval(v) { return v ? " [" + fmt(v[0]) + ", " + fmt(v[1]) + "]" : ""; }
    var rows = DATA.groups.map(function (g) {
      return el("tr", null, [el("td", { text: g.world }), el("td", { text: profileLabel(g.profile) }),
        el("td", { text: fmt(g.pass_rate) + interval(g.pass_rate_interval) }), el("td", { cls: "mono", text: g.pass_k.map(function (p) {
          return "pass^" + p[0] + " " + fmt(p[1]) + interval(p[2]);
        }).join("  ") })]);
    });
    section.appendChild(table(["world", "profile", "pass_rate (95% interval)", "pass^k (95% interval)"], rows));
    var spent = [];
    DATA.groups.forEach(function (g) {
      (g.tasks || []).forEach(function (t) {
        if (!t.usage) return;
        spent.push(el("tr", null, [el("td", { text: g.world + "/" + t.task }), el("td", { text: profileLabel(g.profile) }),
          el("td", { text: t.c + "/" + t.n }), el("td", { text: String(t.usage.input_tokens + t.usage.output_tokens) }),
          el("td", { text: "$" + t.usage.cost_usd.toFixed(4) }),
          el("td", { text: t.usage.pass_per_dollar === null ? "-" : t.usage.pass_per_dollar.toFixed(1) })]));
      });
    });
    if (spent.length) {
      section.appendChild(el("h3", { text: "Spend per task" }));
      section.appendChild(table(["task", "profile", "passed", "tokens", "cost", "passes per $"], spent));
    }
    if (DATA.robustness.length) {
      section.appendChild(el("h3", { text: "Robustness: with the faults minus without" }));
      section.appendChild(table(["world", "profile", "k", "none", "faults", "delta"], [].concat.apply([],
        DATA.robustness.map(function (r) {
          return r.points.map(function (p) {
            return el("tr", null, [el("td", { text: r.world }), el("td", { text: r.profile }), el("td", { text: p[0] }),
              el("td", { text: fmt(p[1]) }), el("td", { text: fmt(p[2]) }),
              el("td", { cls: p[3] < 0 ? "error" : null, text: (p[3] >= 0 ? "+" : "") + fmt(p[3]) })]);
          });
        }))));
    }
    return section;
  }

  var COLORS = ["#3767b5", "#b3261e", "#2e9d5b", "#8a3ffc", "#d9822b", "#5b6474"];
  function lineChart(groups) {
    var NS = "http://www.w3.org/2000/svg", W = 360, H = 200, L = 36, R = 110, T = 10, B = 28;
    var maxK = 1;
    groups.forEach(function (g) { g.pass_k.forEach(function (p) { maxK = Math.max(maxK, p[0]); }); });
    function x(k) { return L + (maxK === 1 ? 0 : (k - 1) / (maxK - 1) * (W - L - R)); }
    function y(v) { return T + (1 - v) * (H - T - B); }
    function s(tag, attrs, text) {
      var node = document.createElementNS(NS, tag);
      for (var key in attrs) node.setAttribute(key, attrs[key]);
      if (text !== undefined) node.textContent = text;
      return node;
    }
    var svg = s("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": "pass^k against k" });
    [0, 0.5, 1].forEach(function (v) {
      svg.appendChild(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#d9dee7" }));
      svg.appendChild(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(1)));
    });
    for (var k = 1; k <= maxK; k++) svg.appendChild(s("text", { x: x(k), y: H - 10, "text-anchor": "middle" }, String(k)));
    svg.appendChild(s("text", { x: (W - R + L) / 2, y: H, "text-anchor": "middle" }, "k"));
    groups.forEach(function (g, i) {
      var color = COLORS[i % COLORS.length];
      var points = g.pass_k.filter(function (p) { return p[1] !== null; });
      if (!points.length) return;
      svg.appendChild(s("polyline", { fill: "none", stroke: color, "stroke-width": 2,
        points: points.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" ") }));
      points.forEach(function (p) {
        if (p[2]) {  // the 95% interval as an error bar (nudged sideways so profiles do not overlap)
          var bx = x(p[0]) + (i - (groups.length - 1) / 2) * 4;
          var bar = s("g", { "class": "error-bar", stroke: color, "stroke-width": 1, opacity: 0.55 });
          bar.appendChild(s("line", { x1: bx, x2: bx, y1: y(p[2][0]), y2: y(p[2][1]) }));
          bar.appendChild(s("line", { x1: bx - 3, x2: bx + 3, y1: y(p[2][0]), y2: y(p[2][0]) }));
          bar.appendChild(s("line", { x1: bx - 3, x2: bx + 3, y1: y(p[2][1]), y2: y(p[2][1]) }));
          svg.appendChild(bar);
        }
        var dot = s("circle", { cx: x(p[0]), cy: y(p[1]), r: 3, fill: color });
        dot.appendChild(s("title", {}, profileLabel(g.profile) + ": pass^" + p[0] + " = " + fmt(p[1]) +
          (p[2] ? " (95% interval " + fmt(p[2][0]) + " to " + fmt(p[2][1]) + ")" : "")));
        svg.appendChild(dot);
      });
      svg.appendChild(s("text", { x: W - R + 8, y: T + 12 + i * 16, style: "fill:" + color }, profileLabel(g.profile)));
    });
    return svg;
  }

  function baselineSection(b) {
    var section = el("section", { id: "baseline" }, [el("h2", { text: "Against the baseline" }),
      el("div", { cls: "meta", text: b.baseline })]);
    var summary = Object.keys(b.summary).filter(function (k) { return b.summary[k]; }).map(function (k) {
      return b.summary[k] + " " + k;
    }).join(", ");
    section.appendChild(el("p", { text: summary || "no tasks" }));
    if (b.alpha !== undefined) {
      section.appendChild(el("p", { cls: "meta", text: "regressed and fixed: a significant change " +
        "(Fisher's exact test, alpha " + b.alpha + "); within noise: a change the trials cannot tell from chance" }));
    }
    var rows = b.tasks.filter(function (t) { return t.status !== "still passing"; }).map(function (t) {
      function cn(x) { return x ? x.c + "/" + x.n : "-"; }
      var p = (t.p_value === null || t.p_value === undefined) ? "-" : t.p_value.toPrecision(3);
      return el("tr", null, [el("td", { cls: "status-" + t.status.replace(/[ _]/g, "-"), text: t.status.replace(/_/g, " ") }),
        el("td", { text: t.world + "/" + t.task }), el("td", { text: profileLabel(t.faults || "none") }),
        el("td", { text: cn(t.before) }), el("td", { text: cn(t.after) }), el("td", { text: p })]);
    });
    if (rows.length) section.appendChild(table(["status", "task", "profile", "before", "after", "p"], rows));
    return section;
  }

  // --- the verify report --------------------------------------------------------------------
  function verifyView() {
    var r = DATA.report;
    var counts = r.counts || {};
    document.body.insertBefore(header(DATA.title, ["baseline: " + r.cassette, "candidate: " + r.candidate,
      "ERR " + (counts.ERR || 0) + ", WARN " + (counts.WARN || 0) + ", INFO " + (counts.INFO || 0) +
      " (fails on " + r.fail_on + ")"]), root);
    var severities = ["ERR", "WARN", "INFO"];
    var filters = el("div", { cls: "filters" }, [select("severity", "f-severity", severities),
      select("rule", "f-rule", uniq(r.findings.map(function (f) { return f.rule; }))),
      el("span", { cls: "count", id: "shown" })]);
    root.appendChild(filters);
    var list = el("div", { id: "findings" });
    if (!r.findings.length) list.appendChild(el("p", { cls: "empty", text: "no findings: the candidate matches" }));
    severities.forEach(function (sev) {
      var ofSev = r.findings.filter(function (f) { return f.severity === sev; });
      if (!ofSev.length) return;
      var block = el("section", { cls: "severity", "data-severity": sev }, [el("h2", { cls: "sev-" + sev, text: sev + " (" + ofSev.length + ")" })]);
      uniq(ofSev.map(function (f) { return f.rule; })).forEach(function (rule) {
        var ofRule = ofSev.filter(function (f) { return f.rule === rule; });
        block.appendChild(el("h3", { text: rule + ": " + (DATA.rules[rule] || "") + " (" + ofRule.length + ")" }));
        ofRule.forEach(function (f) {
          block.appendChild(el("div", { cls: "finding", "data-rule": f.rule, "data-severity": f.severity }, [
            el("div", null, [el("span", { cls: "sev-" + f.severity, text: f.severity + " " + f.rule + " " }),
              el("strong", { text: (f.tool ? f.kind + " " + f.tool : "server") }), " ",
              el("code", { text: f.pointer || "" })]),
            el("div", { text: f.message }),
            (f.old !== null || f.new !== null) ? el("div", { cls: "sides" }, [
              el("div", null, [el("div", { cls: "meta", text: "recorded (old)" }), el("pre", { text: JSON.stringify(f.old, null, 2) })]),
              el("div", null, [el("div", { cls: "meta", text: "now (new)" }), el("pre", { text: JSON.stringify(f.new, null, 2) })]),
            ]) : null,
            f.evidence && f.evidence.length ? el("ul", null, f.evidence.map(function (e) { return el("li", { cls: "mono", text: e }); })) : null,
          ]));
        });
      });
      list.appendChild(block);
    });
    root.appendChild(list);
    function apply() {
      var sev = document.getElementById("f-severity").value, rule = document.getElementById("f-rule").value;
      var shown = 0;
      list.querySelectorAll(".finding").forEach(function (node) {
        var ok = (!sev || node.getAttribute("data-severity") === sev) && (!rule || node.getAttribute("data-rule") === rule);
        node.classList.toggle("hidden", !ok);
        if (ok) shown += 1;
      });
      list.querySelectorAll("section.severity").forEach(function (s) {
        s.classList.toggle("hidden", !s.querySelector(".finding:not(.hidden)"));
      });
      document.getElementById("shown").textContent = shown + " of " + r.findings.length + " findings shown";
    }
    document.getElementById("f-severity").addEventListener("change", apply);
    document.getElementById("f-rule").addEventListener("change", apply);
    apply();
  }

  // --- the cassette timeline ----------------------------------------------------------------
  function marked(text) {
    var span = el("span", { cls: "val mono" });
    var re = /\[REDACTED(?::[0-9]+)?\]/g, last = 0, m;
    while ((m = re.exec(text)) !== null) {
      span.appendChild(document.createTextNode(text.slice(last, m.index)));
      span.appendChild(el("mark", { cls: "redacted", title: "redacted before it was written", text: m[0] }));
      last = m.index + m[0].length;
    }
    span.appendChild(document.createTextNode(text.slice(last)));
    return span;
  }
  function cassetteView() {
    var c = DATA.cassette;
    document.body.insertBefore(header(DATA.title, [c.path, "server: " + (c.server || "?") + ", " +
      c.messages.length + " messages, " + c.redactions + " redacted values"]), root);
    var methods = uniq(c.messages.map(function (m) { return m.method || ""; }).filter(Boolean));
    root.appendChild(el("div", { cls: "filters" }, [select("method", "f-method", methods),
      select("direction", "f-dir", ["client", "server"]),
      el("label", null, ["redacted only", el("input", { type: "checkbox", id: "f-redacted" })]),
      el("span", { cls: "count", id: "shown" })]));
    var rows = c.messages.map(function (m) {
      return el("tr", { "data-method": m.method || "", "data-dir": m.direction, "data-redacted": m.redacted ? "1" : "" }, [
        el("td", { cls: "mono", text: m.seq }),
        el("td", { cls: "dir", text: m.direction === "client" ? "→ server" : "← server" }),
        el("td", { text: (m.method || (m.reply_to !== null ? "answer to #" + m.reply_to : "")) + (m.error ? " (error)" : "") }),
        el("td", { cls: "mono", text: m.latency_ms === null ? "" : fmt(m.latency_ms, 1) + " ms" }),
        el("td", { cls: "mono", text: m.bytes + " B" }),
        el("td", null, [marked(m.text)]),
      ]);
    });
    var body = table(["#", "direction", "method", "latency", "size", "message"], rows, "data timeline");
    root.appendChild(body);
    function apply() {
      var method = document.getElementById("f-method").value, dir = document.getElementById("f-dir").value;
      var red = document.getElementById("f-redacted").checked, shown = 0;
      rows.forEach(function (row) {
        var ok = (!method || row.getAttribute("data-method") === method) && (!dir || row.getAttribute("data-dir") === dir) &&
          (!red || row.getAttribute("data-redacted"));
        row.classList.toggle("hidden", !ok);
        if (ok) shown += 1;
      });
      document.getElementById("shown").textContent = shown + " of " + rows.length + " messages shown";
    }
    ["f-method", "f-dir", "f-redacted"].forEach(function (id) { document.getElementById(id).addEventListener("change", apply); });
    apply();
  }

  ({ run: runView, verify: verifyView, cassette: cassetteView })[DATA.kind]();
  document.body.setAttribute("data-ready", "1");
})();
