#!/usr/bin/env python3
"""Generates traces/data/volunteer-10k.{json,csv}: about 10,000 consumer
GPUs (RTX 4090 and RTX 3090 volunteers) in the 69 cities of Skyplane's
measured inter-region grid, each behind the measured on-premise access link
volunteer-mix uses, training with DiLoCo. Deterministic: the same data give
the same bytes. Reads the shared data folder (GEODES_SHARED_DATA, default
../shared/data beside the repository); run by hand when the data change,
the build never runs it.

Cities: every region of Skyplane's ICMP grid of 2022-04-16 (AWS, Azure and
GCP, 69 regions on six continents) stands for a city whose volunteers reach
the Internet through it; two regions of one metro stay two sites. Between
cities: the grid's RTT/2 (PREMIUM tier where both tiers were measured) plus
the access leg at each end; bandwidth the least of the access link and the
mean of the 64-stream iperf3 grids where measured (the access link alone
where not). Inside a city: the access leg alone, as volunteer-mix's consumer
sites. Devices: 10,000 = 4 stages x 2,500 replicas, 145 per city (144 in
the last five); even cities RTX 4090, odd RTX 3090 (an assumption: no public
census of volunteers' GPUs by city)."""
import csv, json, os, statistics
from collections import OrderedDict
HERE = os.path.dirname(os.path.abspath(__file__))
D = os.environ.get('GEODES_SHARED_DATA', os.path.join(HERE, '../../../shared/data'))
OUT = os.path.join(HERE, '../data')
HDR = 't_s,src,dst,latency_ms,bandwidth_gbps'
NAME = 'volunteer-10k'

# the access link of volunteer-mix (traces/gen/gen_builtins.py): median
# RTT / 2 and median single-stream rate of an on-premise workstation to
# Google Cloud (hivemind-multi-cloud, MIT)
acc = list(csv.DictReader(open(
    f'{D}/hivemind_multi_cloud/logs/experiment-set-3/3-P.0/iperf-profile-rtx8000.csv')))
def mbit(r):
    return float(r['bandwidth']) * (1000 if r['bandwidth_metric'].startswith('G') else 1)
ACC_LAT = round(statistics.median(float(r['avg_ping_ms']) for r in acc) / 2, 3)
ACC_BW = statistics.median(mbit(r) for r in acc) / 1000

lat = {}
for r in csv.DictReader(open(f'{D}/skyplane/latency_grid_2022-04-16_v2.csv')):
    key = (r['src_region'], r['dst_region'])
    if r['src_tier'] == 'PREMIUM' or key not in lat:
        lat[key] = float(r['avg_rtt']) / 2
bw = {}
for d in ['2022-01-24', '2022-01-29', '2022-11-28']:
    for r in csv.DictReader(open(f'{D}/skyplane/throughput_grid_{d}_64conn.csv')):
        rx = r.get('throughput_recieved') or r.get('throughput_received')
        if r['success'] == 'True' and rx:
            bw.setdefault((r['src_region'], r['dst_region']), []).append(float(rx) / 1e9)
REG = sorted({a for a, _ in lat})
assert len(REG) == 69 and all((a, b) in lat for a in REG for b in REG if a != b)
def site_name(region):
    return region.replace(':', '-')

def link(a, b):
    if a == b:
        return (f'{ACC_LAT:.3f}', f'{ACC_BW:g}')
    l = lat[(a, b)] + 2 * ACC_LAT
    m = bw.get((a, b))
    g = min(ACC_BW, sum(m) / len(m)) if m else ACC_BW
    return (f'{l:.3f}', f'{g:.3f}')

STAGES, REPLICAS = 4, 2500
N = STAGES * REPLICAS
per = [N // len(REG) + (1 if i < N % len(REG) else 0) for i in range(len(REG))]
per.sort(reverse=True)
assert sum(per) == N

with open(f'{OUT}/{NAME}.csv', 'w') as f:
    for c in [
        'source: skyplane-project/skyplane profiles: latency_grid (ICMP ping '
        'avg RTT, 2022-04-16, 69 AWS/Azure/GCP regions) and the iperf3 -P 64 '
        'throughput grids of 2022-01-24, 01-29, 11-28; '
        'cirquit/hivemind-multi-cloud artifacts/networking/logs/'
        'experiment-set-3/3-P.0/iperf-profile-rtx8000.csv for the access '
        'link (as volunteer-mix)',
        'licence: Apache-2.0 (Copyright the Skyplane authors) and MIT '
        '(cirquit/hivemind-multi-cloud); values derived, not copied',
        f'derived: each region stands for a city of volunteers; between '
        f'cities RTT/2 of the pair (PREMIUM tier where both measured) plus '
        f'the access leg at each end ({ACC_LAT} ms one-way each), bandwidth '
        f'the least of the access link ({ACC_BW:g} Gbit/s, median) and the '
        f'mean 64-stream rate where measured; inside a city the access leg '
        f'alone: {ACC_LAT} ms, {ACC_BW:g} Gbit/s',
        'caveat: composed, not measured end to end: the access figure is one '
        'university workstation\'s link, not a household\'s; cloud regions '
        'stand in for the volunteers\' cities',
        'generator: traces/gen/gen_volunteer10k.py',
        'latency_convention: RTT/2 (measured)',
        'synthetic_from_real: false']:
        f.write(f'# {c}\n')
    f.write(HDR + '\n')
    for a in REG:
        for b in REG:
            l, g = link(a, b)
            f.write(f'0,{site_name(a)},{site_name(b)},{l},{g}\n')

# instance: the spot band faults synth draws from (traces/data/
# fault_params.csv); no interruption statistics of volunteers exist, so
# the p3.2xlarge band stands in, as for volunteer-mix.
sites = [OrderedDict(name=site_name(r), devices=per[i], instance='p3.2xlarge',
                     gpu='RTX4090' if i % 2 == 0 else 'RTX3090',
                     nic_gbps=1, nic='generic')
         for i, r in enumerate(REG)]
j = OrderedDict(
    name=NAME,
    description=(
        f'About 10,000 volunteers\' consumer GPUs (RTX 4090 in even, RTX 3090 '
        f'in odd cities; assumed) in 69 cities, the regions of Skyplane\'s '
        f'measured AWS/Azure/GCP grid (Apache-2.0) standing for the cities, '
        f'145 GPUs each (144 in the last five). Every volunteer behind '
        f'volunteer-mix\'s measured on-premise access link ({ACC_LAT} ms, '
        f'{ACC_BW:g} Gbit/s: hivemind-multi-cloud, MIT) and gigabit Ethernet. '
        f'GPT-3 XL in 4 stages x 2,500 replicas trained with DiLoCo (100 '
        f'inner steps, int8 pseudo-gradients) whose exchange reduces in two '
        f'levels (exchange_levels 2: in each city, then across cities). '
        f'Faults: the p3.2xlarge spot band stands in (instance). '
        f'traces/gen/gen_volunteer10k.py says what is assumed.'),
    seed=1, latency_convention='RTT/2 (measured)',
    # per-VM measured rates: each sender's egress shaped, tc
    # (traces/FORMATS.md); the hosts' window is the OS default
    sites=sites, network=OrderedDict(shaping='tc', trace=f'{NAME}.csv'),
    workload=OrderedDict(model='gpt3-xl', layers=24, batch=REPLICAS * 8,
                         micro_batch=1, stages=STAGES, replicas=REPLICAS,
                         micro_batches_per_pass=8, schedule='gpipe',
                         dp_algo='diloco', inner_steps=100, grad_bits=8,
                         exchange_levels=2, recompute=True,
                         runtime='dtfm'))
with open(f'{OUT}/{NAME}.json', 'w') as f:
    text = json.dumps(j, indent=2)
    for s_ in j['sites']:
        pretty = json.dumps(s_, indent=2).replace('\n', '\n    ')
        text = text.replace('    ' + pretty, '    ' + json.dumps(s_), 1)
    f.write(text + '\n')
