// Headless Debian chromium through puppeteer-core, and a PNG decoder for checking
// screenshots' pixels (node's zlib only; PNGs from Chromium are 8-bit RGB or RGBA).
'use strict';
const zlib = require('zlib');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.RBT_CHROMIUM || '/usr/bin/chromium';

async function launch() {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a VM: no sandbox; WebGL (speedscope) on the CPU through SwiftShader.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--use-angle=swiftshader',
           '--enable-unsafe-swiftshader', '--disable-gpu-sandbox'],
  });
}

function decodePng(buf) {
  let pos = 8, width = 0, height = 0, colorType = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      if (data[8] !== 8) throw new Error('PNG bit depth ' + data[8]);
      colorType = data[9];
    } else if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  const bpp = colorType === 6 ? 4 : colorType === 2 ? 3 : 0;
  if (!bpp) throw new Error('PNG colour type ' + colorType);
  const raw = zlib.inflateSync(Buffer.concat(idat)), stride = width * bpp;
  const out = Buffer.alloc(width * height * 4);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[i] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = line[x * bpp]; out[o + 1] = line[x * bpp + 1]; out[o + 2] = line[x * bpp + 2];
      out[o + 3] = bpp === 4 ? line[x * bpp + 3] : 255;
    }
    prev = line;
  }
  return { width, height, pixels: out };
}

// Pixels within `tolerance` of rgb.
function countPixels(png, [r, g, b], tolerance = 8) {
  let n = 0;
  for (let i = 0; i < png.pixels.length; i += 4)
    if (Math.abs(png.pixels[i] - r) <= tolerance && Math.abs(png.pixels[i + 1] - g) <= tolerance &&
        Math.abs(png.pixels[i + 2] - b) <= tolerance)
      n++;
  return n;
}

module.exports = { launch, decodePng, countPixels };
