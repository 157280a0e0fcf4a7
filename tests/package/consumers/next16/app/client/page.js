'use client';
// A client component: the package runs in the browser (its single-thread build on the page's main thread).
import { useEffect, useState } from 'react';
import { init } from 'kernel-attention';
import { compute } from '../compute.js';

export default function Client() {
  const [text, setText] = useState('computing');
  useEffect(() => {
    init().then(
      (ka) => {
        window.results = [compute(ka)];
        setText('done');
      },
      (e) => {
        window.results = [{ error: String(e) }];
        setText(String(e));
      },
    );
  }, []);
  return <pre id="client">{text}</pre>;
}
