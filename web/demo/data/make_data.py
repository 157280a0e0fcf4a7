#!/usr/bin/python3
"""Writes datasets.js: the demo's built-in real data sets, taken from Debian's python3-statsmodels.

Run with /usr/bin/python3 from the repository root:  /usr/bin/python3 web/demo/data/make_data.py
Only data sets whose statsmodels licence note says public domain are taken; the script stops otherwise.
Numbers are written as the source holds them (Python's shortest repr), so the page shows them at their own precision.
"""
import json
import math
import pathlib

import statsmodels.datasets as sm

OUT = pathlib.Path(__file__).with_name('datasets.js')


def public_domain(module):
    note = module.COPYRIGHT.lower()
    if 'public domain' not in note:
        raise SystemExit(f'{module.__name__}: licence note is not public domain: {module.COPYRIGHT!r}')
    return module.load_pandas().data


def number(v):
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(v)
    return int(v) if v == int(v) and abs(v) < 1e15 else v


def rows(*columns):
    return [[number(v) for v in row] for row in zip(*columns)]


def nile():
    d = public_domain(sm.nile)
    return dict(label='Nile: yearly flow at Aswan, 1871–1970', names=['year', 'volume (10⁸ m³)'], dim=1,
                rows=rows(d['year'], d['volume']),
                source='Cobb (1978), Biometrika 65: the Nile’s annual flow at Aswan; public domain, via statsmodels.')


def co2():
    d = public_domain(sm.co2).dropna()
    # Monthly means of the weekly flask samples, at the middle of each month (as a decimal year).
    monthly = d['co2'].resample('MS').mean().dropna()
    x = [round(t.year + (t.month - 0.5) / 12, 4) for t in monthly.index]
    y = [round(v, 2) for v in monthly.values]
    return dict(label='CO₂ at Mauna Loa, monthly, 1958–2001', names=['year', 'CO₂ (ppm)'], dim=1, rows=rows(x, y),
                source='Keeling and Whorf (2004), Scripps flask samples at Mauna Loa (CDIAC); public domain, via '
                       'statsmodels; monthly means of the weekly values.')


def engel():
    d = public_domain(sm.engel)
    return dict(label='Engel: food expenditure and income, 235 households', names=['income', 'food expenditure'], dim=1,
                rows=rows(d['income'], d['foodexp']),
                source='Koenker and Bassett (1982), Econometrica 50: Belgian working-class households in 1857; '
                       'public domain, via statsmodels.')


def sunspots():
    d = public_domain(sm.sunspots)
    return dict(label='Sunspots: yearly activity, 1700–2008', names=['year', 'sunspot number'], dim=1,
                rows=rows(d['YEAR'], d['SUNACTIVITY']),
                source='NOAA National Geophysical Data Center, yearly sunspot numbers; public domain, via statsmodels.')


def elnino():
    d = public_domain(sm.elnino)
    months = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
    x, y = [], []
    for _, r in d.iterrows():
        for m, name in enumerate(months):
            x.append(round(r['YEAR'] + (m + 0.5) / 12, 4))
            y.append(r[name])
    return dict(label='El Niño: sea surface temperature, monthly, 1950–2010', names=['year', 'SST Niño 1+2 (°C)'],
                dim=1, rows=rows(x, y),
                source='NOAA Climate Prediction Center, ERSST.V3B, region Niño 1+2; public domain, via statsmodels.')


def stackloss():
    d = public_domain(sm.stackloss)
    return dict(label='Stack loss: a plant’s ammonia loss (2-D)', names=['air flow', 'water temperature', 'stack loss'],
                dim=2, rows=rows(d['AIRFLOW'], d['WATERTEMP'], d['STACKLOSS']),
                source='Brownlee (1965), Statistical Theory and Methodology: 21 days of a nitric acid plant; '
                       'public domain, via statsmodels.')


def main():
    sets = {name: make() for name, make in
            [('nile', nile), ('co2', co2), ('engel', engel), ('sunspots', sunspots), ('elnino', elnino),
             ('stackloss', stackloss)]}
    body = ',\n'.join(f'  {name}: {json.dumps(s, ensure_ascii=False, separators=(",", ":"))}' for name, s in sets.items())
    OUT.write_text('// Written by make_data.py from Debian\'s python3-statsmodels (public-domain data sets): do not edit.\n'
                   '// Each set: label, names (x column(s), then y), dim, rows ([x…, y]), source (one line on its origin).\n'
                   f'export const DATASETS = {{\n{body},\n}};\n', encoding='utf-8')
    print(OUT, {k: len(v['rows']) for k, v in sets.items()})


if __name__ == '__main__':
    main()
