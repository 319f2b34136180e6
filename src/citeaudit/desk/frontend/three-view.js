// The desk's 3D evidence view: the same scene as the 2D map, with three.js. Statements are planes in the
// front layer, passages planes in the back layer (by rank), and every citation pointer a tube between them,
// coloured by its check. Drag to turn the scene, wheel (or +/-) to zoom, click a plane or a tube to select.
// Labels are drawn on canvases with fillText: untrusted text is never parsed as markup.
//
// Bundled by scripts/build-desk.sh into ../static/build/three-view.js; the page loads it with import().
import * as THREE from "three";

const COLOURS = { precise: 0x1e7a3c, imprecise: 0xb86e00, unsupported: 0xc0262d, unscored: 0x7a7f85 };
const LABEL_COLOURS = { full: "#1e7a3c", partial: "#b86e00", none: "#c0262d", contradicts: "#c0262d" };
const PLANE_W = 5.2;
const PLANE_H = 1.7;
const GAP = 0.5;
const FRONT_Z = 2.5;
const BACK_Z = -2.5;
const FRONT_X = -4.3;
const BACK_X = 4.3;

function wrap(ctx, text, width, maxLines) {
  const words = String(text).split(/\s+/);
  const lines = [];
  let line = "";
  for (const w of words) {
    const next = line ? `${line} ${w}` : w;
    if (ctx.measureText(next).width > width && line) {
      lines.push(line);
      line = w;
      if (lines.length === maxLines) break;
    } else {
      line = next;
    }
  }
  if (lines.length < maxLines && line) lines.push(line);
  if (lines.length === maxLines && words.join(" ").length > lines.join(" ").length) {
    lines[maxLines - 1] = `${lines[maxLines - 1].replace(/\s+\S*$/, "")} …`;
  }
  return lines;
}

function labelTexture({ head, tag, tagColour, text, border, selected, muted }) {
  const canvas = document.createElement("canvas");
  canvas.width = 640;
  canvas.height = 210;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = selected ? "#e6effa" : muted ? "#f0f0ee" : "#ffffff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.lineWidth = selected ? 14 : 6;
  ctx.strokeStyle = selected ? "#1f5fa8" : border;
  ctx.strokeRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#1d1f21";
  ctx.font = "bold 34px system-ui, sans-serif";
  ctx.fillText(head, 22, 46);
  if (tag) {
    const x = 30 + ctx.measureText(head).width;
    ctx.font = "28px system-ui, sans-serif";
    ctx.fillStyle = tagColour || "#5c6166";
    ctx.fillText(tag, x, 46);
  }
  ctx.font = "26px system-ui, sans-serif";
  ctx.fillStyle = muted ? "#5c6166" : "#33373b";
  wrap(ctx, text, canvas.width - 44, 4).forEach((line, i) => ctx.fillText(line, 22, 88 + i * 32));
  const tex = new THREE.CanvasTexture(canvas);
  tex.colorSpace = THREE.SRGBColorSpace;
  tex.anisotropy = 4;
  return tex;
}

export function createThreeView(container, { onSelect }) {
  const renderer = new THREE.WebGLRenderer({ antialias: true }); // throws without WebGL: the page falls back
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  const canvas = renderer.domElement;
  canvas.id = "three-canvas";
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", "3D evidence map: drag or arrow keys to turn, wheel or +/- to zoom, click to select");
  container.replaceChildren(canvas);
  const hint = document.createElement("p");
  hint.className = "three-hint";
  hint.textContent = "drag / arrows: turn · wheel / + −: zoom · click: select";
  container.append(hint);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf7f7f4);
  scene.add(new THREE.AmbientLight(0xffffff, 2.2));
  const sun = new THREE.DirectionalLight(0xffffff, 1.2);
  sun.position.set(4, 8, 10);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.1, 500);
  const root = new THREE.Group();
  scene.add(root);

  let yaw = -0.28;
  let pitch = 0.12;
  let dist = 20;
  let fitted = 20; // distance that shows the whole scene at the current aspect
  let rows = 1;
  let centreY = 0;
  let pickables = [];
  let disposables = [];
  let frame = 0;

  function placeCamera() {
    const cp = Math.cos(pitch);
    camera.position.set(dist * Math.sin(yaw) * cp, centreY + dist * Math.sin(pitch), dist * Math.cos(yaw) * cp);
    camera.lookAt(0, centreY, 0);
  }

  function draw() {
    frame = 0;
    placeCamera();
    renderer.render(scene, camera);
  }
  function requestDraw() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  function resize() {
    const w = Math.max(1, container.clientWidth);
    const hgt = Math.max(1, container.clientHeight);
    renderer.setSize(w, hgt, false);
    camera.aspect = w / hgt;
    camera.updateProjectionMatrix();
    fit();
    requestDraw();
  }

  /** The distance at which the whole scene fits; applied when the user has not zoomed (or when asked). */
  function fit(force) {
    const tan = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2));
    const height = rows * (PLANE_H + GAP) + 1;
    const width = BACK_X - FRONT_X + PLANE_W + 1.5;
    const next = Math.max(height / 2 / tan, width / 2 / (tan * camera.aspect)) + 3;
    if (force || Math.abs(dist - fitted) < 0.01) dist = next;
    fitted = next;
  }

  function clear() {
    for (const d of disposables) d.dispose();
    disposables = [];
    pickables = [];
    root.clear();
  }

  function plane(x, y, z, tex, userData) {
    const geo = new THREE.PlaneGeometry(PLANE_W, PLANE_H);
    const mat = new THREE.MeshBasicMaterial({ map: tex, side: THREE.DoubleSide });
    const mesh = new THREE.Mesh(geo, mat);
    mesh.position.set(x, y, z);
    mesh.userData = userData;
    disposables.push(geo, mat, tex);
    root.add(mesh);
    pickables.push(mesh);
    // A thin slab behind, so each plane reads as a card from the side.
    const slabGeo = new THREE.BoxGeometry(PLANE_W, PLANE_H, 0.08);
    const slabMat = new THREE.MeshLambertMaterial({ color: 0xcfd3cf });
    const slab = new THREE.Mesh(slabGeo, slabMat);
    slab.position.set(x, y, z - 0.05);
    disposables.push(slabGeo, slabMat);
    root.add(slab);
    return mesh;
  }

  function layerY(i, n) {
    return ((n - 1) / 2 - i) * (PLANE_H + GAP);
  }

  function update(data) {
    clear();
    const ns = data.statements.length;
    const np = data.passages.length;
    const statementPos = new Map();
    const passagePos = new Map();
    data.statements.forEach((st, i) => {
      const y = layerY(i, ns);
      statementPos.set(st.index, y);
      const tex = labelTexture({
        head: st.name, tag: st.scored ? st.label : `${st.kind}: not scored`,
        tagColour: LABEL_COLOURS[st.label], text: st.text, border: LABEL_COLOURS[st.label] || "#9aa0a6",
        selected: st.index === data.selected, muted: !st.scored,
      });
      plane(FRONT_X, y, FRONT_Z, tex, { type: "statement", index: st.index });
    });
    const cited = new Set(data.threads.filter((t) => t.statement === data.selected).map((t) => t.passage));
    data.passages.forEach((p, i) => {
      const y = layerY(i, np);
      passagePos.set(p.id, y);
      const tex = labelTexture({
        head: p.label || p.id, tag: p.rank ? `#${p.rank} ${p.title || ""}` : p.title || "", text: p.text,
        border: cited.has(p.id) ? "#1f5fa8" : "#c9ccc8", selected: false, muted: false,
      });
      plane(BACK_X, y, BACK_Z, tex, { type: "passage", id: p.id });
    });
    for (const t of data.threads) {
      const y1 = statementPos.get(t.statement);
      const y2 = passagePos.get(t.passage);
      if (y1 === undefined || y2 === undefined) continue;
      const a = new THREE.Vector3(FRONT_X + PLANE_W / 2 - 0.1, y1, FRONT_Z - 0.1);
      const b = new THREE.Vector3(BACK_X - PLANE_W / 2 + 0.1, y2, BACK_Z + 0.05);
      const mid = a.clone().lerp(b, 0.5).add(new THREE.Vector3(0, 0, 0.8));
      const curve = new THREE.QuadraticBezierCurve3(a, mid, b);
      const mine = t.statement === data.selected;
      const chosen = mine && t.passage === data.thread;
      const geo = new THREE.TubeGeometry(curve, 32, chosen ? 0.09 : mine ? 0.065 : 0.04, 8, false);
      const mat = new THREE.MeshLambertMaterial({
        color: COLOURS[t.status] || COLOURS.unscored, transparent: !mine, opacity: mine ? 1 : 0.45,
      });
      const tube = new THREE.Mesh(geo, mat);
      tube.userData = { type: "thread", index: t.statement, passage: t.passage };
      disposables.push(geo, mat);
      root.add(tube);
      pickables.push(tube);
    }
    centreY = 0;
    const newRows = Math.max(ns, np, 1);
    const refit = newRows !== rows || Math.abs(dist - fitted) < 0.01;
    rows = newRows;
    if (refit) fit(true);
    requestDraw();
  }

  // Interaction: drag turns, a click without drag picks.
  const raycaster = new THREE.Raycaster();
  let down = null;
  function onPointerDown(ev) {
    down = { x: ev.clientX, y: ev.clientY, yaw, pitch, moved: false };
    canvas.setPointerCapture(ev.pointerId);
  }
  function onPointerMove(ev) {
    if (!down) return;
    const dx = ev.clientX - down.x;
    const dy = ev.clientY - down.y;
    if (Math.abs(dx) + Math.abs(dy) > 4) down.moved = true;
    yaw = down.yaw - dx * 0.008;
    pitch = Math.max(-1.2, Math.min(1.2, down.pitch + dy * 0.006));
    requestDraw();
  }
  function onPointerUp(ev) {
    if (!down) return;
    const click = !down.moved;
    down = null;
    if (!click) return;
    const r = canvas.getBoundingClientRect();
    const pointer = new THREE.Vector2(((ev.clientX - r.left) / r.width) * 2 - 1, -((ev.clientY - r.top) / r.height) * 2 + 1);
    placeCamera();
    raycaster.setFromCamera(pointer, camera);
    const hit = raycaster.intersectObjects(pickables, false)[0];
    if (!hit) return;
    const u = hit.object.userData;
    if (u.type === "statement") onSelect(u.index, null);
    else if (u.type === "thread") onSelect(u.index, u.passage);
  }
  function onWheel(ev) {
    ev.preventDefault();
    dist = Math.max(6, Math.min(120, dist * (ev.deltaY > 0 ? 1.1 : 0.9)));
    requestDraw();
  }
  function onKey(ev) {
    const step = 0.12;
    if (ev.key === "ArrowLeft") yaw -= step;
    else if (ev.key === "ArrowRight") yaw += step;
    else if (ev.key === "ArrowUp") pitch = Math.min(1.2, pitch + step);
    else if (ev.key === "ArrowDown") pitch = Math.max(-1.2, pitch - step);
    else if (ev.key === "+" || ev.key === "=") dist = Math.max(6, dist * 0.9);
    else if (ev.key === "-") dist = Math.min(120, dist * 1.1);
    else return;
    ev.preventDefault();
    ev.stopPropagation();
    requestDraw();
  }
  canvas.addEventListener("pointerdown", onPointerDown);
  canvas.addEventListener("pointermove", onPointerMove);
  canvas.addEventListener("pointerup", onPointerUp);
  canvas.addEventListener("wheel", onWheel, { passive: false });
  canvas.addEventListener("keydown", onKey);
  const observer = new ResizeObserver(resize);
  observer.observe(container);
  resize();

  return {
    update,
    resize,
    dispose() {
      observer.disconnect();
      clear();
      renderer.dispose();
      container.replaceChildren();
    },
  };
}
