/**
 * The dashboard's stylesheet, served at `/dashboard.css` (the CSP allows no inline style).
 */
export const DASHBOARD_CSS = `
[hidden] { display: none !important; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1.5rem 2rem; color: #1d2430; }
header { display: flex; align-items: center; gap: 1.5rem; padding: .75rem 0; border-bottom: 1px solid #d6dbe1; margin-bottom: 1rem; }
header nav { display: flex; gap: 1rem; align-items: center; }
.brand { font-weight: 700; font-size: 1.2rem; color: inherit; text-decoration: none; }
a { color: #1565c0; }
code, pre, .mono { font: 13px ui-monospace, monospace; }
pre { background: #f4f6f8; padding: .5rem; border-radius: 6px; overflow: auto; margin: 0; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #eceff3; vertical-align: top; }
th { font-weight: 600; color: #5b6573; font-size: 13px; }
.muted, .small { color: #5b6573; font-size: 13px; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; background: #eceff3; }
.status-enabled, .run-succeeded { background: #d7f0dc; color: #1b5e20; }
.status-paused, .run-queued, .run-launching { background: #fff1c9; color: #7a5600; }
.run-running { background: #d5e6fb; color: #0d47a1; }
.status-failed, .run-failed, .run-timed_out { background: #fbd9d7; color: #b71c1c; }
.status-cancelled, .run-cancelled, .run-skipped, .run-missed, .status-completed { background: #e4e7eb; color: #37474f; }
.strip { display: flex; gap: 2px; }
.strip span { width: 10px; height: 18px; border-radius: 2px; display: inline-block; }
.late { color: #b71c1c; font-weight: 600; }
tr.dst td { background: #fff8e1; }
.dst-note { color: #8a5a00; font-weight: 600; }
tr.excluded td { background: #f1f3f6; }
.excluded-note { color: #37474f; }
td.rule { white-space: nowrap; }
.range { color: #37474f; }
.calendar-picks { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: -.2rem; }
form.calendar-form { max-width: 640px; }
#notice ul.warnings li { color: #8a5a00; }
#notice { padding: .6rem .9rem; border-radius: 6px; margin-bottom: 1rem; background: #e8f1fd; }
#notice.problem { background: #fdecea; color: #8c1d18; }
#notice ul { margin: .3rem 0 0; }
form.task-form { display: grid; grid-template-columns: minmax(320px, 1fr) minmax(320px, 1fr); gap: 1.5rem; }
fieldset { border: 1px solid #d6dbe1; border-radius: 6px; margin: 0 0 1rem; }
label { display: block; margin: .4rem 0; }
label > input, label > select, label > textarea { display: block; width: 100%; box-sizing: border-box; margin-top: .15rem; padding: .3rem; font: inherit; }
textarea { min-height: 4rem; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: .5rem 0 1rem; }
button { font: inherit; padding: .3rem .8rem; border: 1px solid #9aa5b1; border-radius: 5px; background: #fff; cursor: pointer; }
button.primary { background: #1565c0; border-color: #1565c0; color: #fff; }
button.danger { border-color: #c62828; color: #c62828; }
button.link { border: none; background: none; color: #1565c0; padding: 0; }
dl.details { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.details dt { color: #5b6573; }
dl.details dd { margin: 0; }
#login { max-width: 520px; }
.preview { min-height: 6rem; }
.scroll { overflow-x: auto; max-width: 100%; }
.live { margin-left: auto; }
form.search { display: flex; gap: .5rem; margin: 0 0 .5rem; max-width: 480px; }
form.search input { flex: 1; min-width: 0; font: inherit; padding: .3rem; }
form.run-filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin-bottom: .5rem; }
form.run-filters fieldset.statuses { display: flex; flex-wrap: wrap; gap: .25rem .75rem; margin: 0; }
label.check { display: inline-flex; gap: .25rem; align-items: center; margin: 0; }
.sparkline { vertical-align: middle; }
.paging a { margin-right: 1rem; }
.figures { display: flex; flex-wrap: wrap; gap: .75rem; margin-bottom: 1rem; }
.figure { border: 1px solid #d6dbe1; border-radius: 6px; padding: .4rem .7rem; min-width: 9rem; }
.figure b { font-size: 1.2rem; }
.overview-chart { width: 100%; max-width: 600px; height: auto; display: block; }
.overview-chart .scale, .sparkline .scale { font-size: 10px; fill: #5b6573; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem .9rem; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: .3rem; border-radius: 2px; }
.swatch-succeeded { background: #2e7d32; } .swatch-failed { background: #c62828; }
.swatch-timed_out { background: #ef6c00; } .swatch-cancelled { background: #78909c; }
.swatch-skipped { background: #b0bec5; } .swatch-missed { background: #8d6e63; }
.replica-live { background: #d7f0dc; color: #1b5e20; } .replica-silent { background: #fbd9d7; color: #b71c1c; }
td.wrap { overflow-wrap: anywhere; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 2px solid #1565c0; outline-offset: 2px; }
@media (max-width: 640px) {
  body { padding: 0 .6rem 1.5rem; }
  header { flex-wrap: wrap; gap: .5rem 1rem; }
  header nav { flex-wrap: wrap; gap: .5rem .8rem; }
  form.task-form { grid-template-columns: minmax(0, 1fr); }
  dl.details { grid-template-columns: minmax(0, 1fr); }
  th, td { padding: .3rem .35rem; }
}
`;
