#!/usr/bin/env python3
"""Generates traces/data/{datacenter,spot,multi-dc,regional,worldwide,
datacenter-physical,spot-physical,worldwide-measured,volunteer-mix}.{json,csv}
from the real
measurements in the shared data folder (GEODES_SHARED_DATA, default
../shared/data beside the repository). Run once by hand when the data
changes; the build never runs it and the program never reads that folder."""
import csv, json, os
from collections import OrderedDict
HERE = os.path.dirname(os.path.abspath(__file__))
D = os.environ.get('GEODES_SHARED_DATA', os.path.join(HERE, '../../../shared/data'))
OUT = os.path.join(HERE, '../data')
HDR = 't_s,src,dst,latency_ms,bandwidth_gbps'

WORKLOAD = OrderedDict(model='gpt3-xl', layers=24, batch=1024, micro_batch=1,
                       stages=8, replicas=8, micro_batches_per_pass=64,
                       schedule='gpipe', dp_algo='central-ps', recompute=True,
                       runtime='dtfm')
COST = {'datacenter': (0.28125, 1.0), 'spot': (0.28125, 1.0),
        'multi-dc': (0.28125, 1.0), 'regional': (0.4, 0.7),
        'worldwide': (0.5, 0.9)}
DTFM_CONV = ('DT-FM table value as one-way delay (as its tc did; real RTT '
             'doubled)')

def write_csv(name, comments, sites, val):
    with open(f'{OUT}/{name}.csv', 'w') as f:
        for c in comments:
            f.write(f'# {c}\n')
        f.write(HDR + '\n')
        for a in sites:
            for b in sites:
                lat, bw = val(a, b)
                f.write(f'0,{a},{b},{lat},{bw}\n')

# Every built-in scenario ran on AWS, whose ENA NICs make NCCL's socket
# transport open 2 threads x 8 sockets per connection (ncclNetSocketGetNsockNthread,
# PCI vendor 0x1d0f, src/transport/net_socket.cc): the site key "nic".
NIC_AWS = 'aws-ena'
# AWS caps one TCP flow at 5 Gbit/s outside a cluster placement group (EC2
# instance network bandwidth documentation); DT-FM's Gloo transfers, one
# socket, reached exactly that on an unshaped link (64 MiB in 107 ms).
AWS_FLOW_GBPS = 5
# A V100 on a p3.2xlarge (8 vCPUs, shared by the training loop and NCCL's
# busy-polling socket threads) reached 0.43 of its peak at DT-FM's shape,
# fitted on DT-FM's measured p3.2xlarge runs (analysis/VALIDATION.md, "What was fitted");
# the 4- and 8-GPU instances (p3.8xlarge, p3.16xlarge) run as the roofline
# says (models/roofline.h), which gives the V100 0.5656 of its peak there.
# compute_efficiency is a factor on the roofline's speed (models/spec.c), so
# sites of single-GPU instances carry 0.43 / 0.5656.
P3_2XLARGE_FRACTION = 0.43
ROOFLINE_V100_FRACTION = 0.5656
P3_2XLARGE_EFFICIENCY = P3_2XLARGE_FRACTION / ROOFLINE_V100_FRACTION
# Every built-in reproduces DT-FM's tc emulation or carries per-VM measured
# rates (Skyplane's 64-stream VM-pair grids): each device's egress shaped
# per destination class, network.shaping "tc" (traces/FORMATS.md). DT-FM's
# p3 hosts keep the TCP window fitted on its Gloo rows (models/transport.h);
# volunteer-mix's hosts take the OS default (no key).
SHAPING = 'tc'
DTFM_WINDOW = 1.45e6

def write_json(name, desc, conv, sites, cost=None):
    def site(s):
        o = OrderedDict(s, nic=NIC_AWS)
        if name not in ('datacenter', 'spot'):  # not DT-FM's literal matrices
            o['flow_gbps'] = AWS_FLOW_GBPS
        if o.pop('p3_2xlarge', False):
            o['compute_efficiency'] = P3_2XLARGE_EFFICIENCY
        o['tcp_window_bytes'] = DTFM_WINDOW
        return o
    j = OrderedDict(name=name, description=desc, seed=1,
                    latency_convention=conv,
                    sites=[site(s) for s in sites],
                    network=OrderedDict(shaping=SHAPING,
                                        trace=f'{name}.csv'),
                    workload=WORKLOAD)
    if cost:
        j['cost'] = OrderedDict(activation_gb=cost[0], gradient_gb=cost[1])
    with open(f'{OUT}/{name}.json', 'w') as f:
        text = json.dumps(j, indent=2)
        for s_ in j['sites']:
            pretty = json.dumps(s_, indent=2).replace('\n', '\n    ')
            text = text.replace('    ' + pretty, '    ' + json.dumps(s_), 1)
        f.write(text + '\n')

# --- the paper's five: site-level traces reproducing the device matrices ---
rows = list(csv.DictReader(open(f'{D}/dtfm_paper/dtfm_device_matrices.csv')))
DESC = {
 'datacenter': 'DT-FM case 1, data center on demand: 8 p3.16xlarge instances '
   '(8 V100 each). DT-FM\'s matrix: 100 "Gbit/s" inside an instance, 3.125 '
   'between instances (25 Gbit/s written in GB/s, unit slip kept so the cost '
   'model reproduces the paper), zero delay. nic_gbps 100 never binds below '
   'the matrix, as in DT-FM\'s scheduler. See datacenter-physical.',
 'spot': 'DT-FM case 2, data center spot instances: 8 p3.8xlarge (4 V100 each, '
   '100 inside) and 32 standalone p3.2xlarge (1 V100 each); everything '
   'between machines 1.25 (10 Gbit/s written in GB/s, unit slip kept), zero '
   'delay. nic_gbps 100 never binds below the matrix. See spot-physical.',
 'multi-dc': 'DT-FM case 3, two data centres: 32 V100 in Ohio and 32 in '
   'Virginia (p3.2xlarge, 10 Gbit/s NIC); DT-FM\'s matrix: 1 ms / 5 Gbit/s '
   'inside a site, 11 ms / 1.12 Gbit/s across.',
 'regional': 'DT-FM case 4, four US regions: 16 V100 each in Virginia, Oregon, '
   'California, Ohio (p3.2xlarge, 10 Gbit/s NIC); DT-FM\'s matrix.',
 'worldwide': 'DT-FM case 5, eight cities on three continents: 8 V100 each in '
   'Oregon, Virginia, Ohio, Tokyo, Seoul, London, Frankfurt, Ireland '
   '(p3.2xlarge, 10 Gbit/s NIC); DT-FM\'s matrix (5 ms / 2 Gbit/s inside a '
   'city).',
}
for sc in ['datacenter', 'spot', 'multi-dc', 'regional', 'worldwide']:
    sites = OrderedDict(); val = {}
    for r in rows:
        if r['scenario'] != sc: continue
        sites.setdefault(r['site_a'], set()).add(int(r['device_a']))
        key = (r['site_a'], r['site_b'])
        v = (r['delay_ms'], r['bandwidth_gbps'])
        assert val.setdefault(key, v) == v
    names = list(sites)
    first = 0
    for s in names:   # devices are contiguous, in site order
        assert sorted(sites[s]) == list(range(first, first + len(sites[s])))
        first += len(sites[s])
    geo = sc not in ('datacenter', 'spot')
    write_csv(sc, [
        'source: DS3Lab/DT-FM, scheduler/generate_sim_com_matrices.py '
        '(device matrices as its scheduler config generates them)',
        'licence: MIT (DS3Lab/DT-FM)',
        'derived: site-level values of every ordered device pair of the '
        'scenario; reproduces all 4032 device pairs exactly',
        'latency_convention: ' + DTFM_CONV,
        'synthetic_from_real: false'], names, lambda a, b: val[(a, b)])
    write_json(sc, DESC[sc], DTFM_CONV,
               [dict(name=s, devices=len(sites[s]), gpu='V100',
                     nic_gbps=10 if geo else 100,
                     p3_2xlarge=geo or s == 'standalone') for s in names],
               COST[sc])

# --- physical variants of the two single-region clusters ---
NV_LAT, NV_BW = 0.005, 1200    # NVLink2 inside an instance
AZ_LAT = 0.076                 # AWS same-region one-way (hivemind ping/2)
PHYS = [
 'derived: physical values, not DT-FM\'s matrix',
 'nvlink: inside an instance 1200 Gbit/s = 150 GB/s per direction per V100 '
 'SXM2 (6 NVLink2 links x 25 GB/s; NVIDIA\'s "300 GB/s" counts both '
 'directions) and 0.005 ms (order of a GPU-to-GPU NVLink transfer latency)',
 'intra_region_latency: 0.076 ms one-way = half the mean of 5 pings between '
 'two AWS us-west-2 VMs (0.160 0.143 0.151 0.160 0.145 ms RTT), '
 'cirquit/hivemind-multi-cloud artifacts/networking/logs/experiment-set-2/'
 'aws-gc/iperf-profile-aws-t4-2.csv (MIT); DT-FM\'s runs used no tc delay '
 'inside one region',
 'licence: MIT (cirquit/hivemind-multi-cloud, for the latency figure)',
 'synthetic_from_real: false']
inst = [f'instance_{k}' for k in range(8)]
write_csv('datacenter-physical', [
    'source: AWS p3.16xlarge spec (8 V100 SXM2 with NVLink, one 25 Gbit/s '
    'NIC shared by the instance)'] + PHYS + [
    'between_instances: 25 Gbit/s (the NIC), 0.076 ms'], inst,
    lambda a, b: (NV_LAT, NV_BW) if a == b else (AZ_LAT, 25))
write_json('datacenter-physical',
    'DT-FM case 1 as it physically was: 8 p3.16xlarge instances of 8 V100; '
    'NVLink2 inside an instance (1200 Gbit/s per direction, 5 us), one '
    '25 Gbit/s NIC shared by the instance\'s 8 GPUs (nic_shared), 0.076 ms '
    'one-way between instances (measured AWS same-region ping / 2).',
    'physical: measured same-region RTT/2 between machines; NVLink 5 us',
    [dict(name=s, devices=8, gpu='V100', nic_gbps=25, nic_shared=True)
     for s in inst], COST['datacenter'])
spot = [f'spot_instance_{k}' for k in range(8)] + ['standalone']
write_csv('spot-physical', [
    'source: AWS p3.8xlarge spec (4 V100 SXM2 with NVLink, one 10 Gbit/s NIC '
    'shared) and p3.2xlarge spec (1 V100, up to 10 Gbit/s NIC each)'] + PHYS +
    ['between_machines: 10 Gbit/s (the NICs), 0.076 ms; standalone is 32 '
     'separate p3.2xlarge machines, so its self value is a network link'],
    spot, lambda a, b: (NV_LAT, NV_BW) if a == b and a != 'standalone'
    else (AZ_LAT, 10))
write_json('spot-physical',
    'DT-FM case 2 as it physically was: 8 p3.8xlarge (4 V100 each, NVLink2 '
    'inside, one 10 Gbit/s NIC shared by the 4 GPUs: nic_shared) and 32 '
    'standalone p3.2xlarge (1 V100, own 10 Gbit/s NIC each); 0.076 ms one-way '
    'between machines (measured AWS same-region ping / 2).',
    'physical: measured same-region RTT/2 between machines; NVLink 5 us',
    [dict(name=s, devices=4, gpu='V100', nic_gbps=10, nic_shared=True)
     for s in spot[:8]] +
    [dict(name='standalone', devices=32, gpu='V100', nic_gbps=10, p3_2xlarge=True,
          nic_shared=False)], COST['spot'])

# --- worldwide-measured: Skyplane's directed AWS grids ---
R = OrderedDict(Oregon='us-west-2', Virginia='us-east-1', Ohio='us-east-2',
                Tokyo='ap-northeast-1', Seoul='ap-northeast-2',
                London='eu-west-2', Frankfurt='eu-central-1',
                Ireland='eu-west-1')
inv = {'aws:' + v: k for k, v in R.items()}
lat = {}
for r in csv.DictReader(open(f'{D}/skyplane/latency_grid_2022-04-16_v2.csv')):
    a, b = inv.get(r['src_region']), inv.get(r['dst_region'])
    if a and b: lat[(a, b)] = float(r['avg_rtt']) / 2
bw = {}
dates = ['2022-01-24', '2022-01-29', '2022-11-28']
for d in dates:
    for r in csv.DictReader(open(f'{D}/skyplane/throughput_grid_{d}_64conn.csv')):
        a, b = inv.get(r['src_region']), inv.get(r['dst_region'])
        rx = r.get('throughput_recieved') or r.get('throughput_received')
        if a and b and r['success'] == 'True':
            bw.setdefault((a, b), []).append(float(rx) / 1e9)
assert len(lat) == 56 and all(len(v) == 3 for v in bw.values()) and len(bw) == 56
def measured(a, b):
    if a == b: return (AZ_LAT, 10)
    return (f'{lat[(a, b)]:.3f}', f'{sum(bw[(a, b)]) / 3:.3f}')
write_csv('worldwide-measured', [
    'source: skyplane-project/skyplane profiles/latency.csv (ICMP ping -c 10, '
    '2022-04-16, avg_rtt) and profiles/throughput.csv grids of 2022-01-24, '
    '2022-01-29 and 2022-11-28 (iperf3 -P 64 -t 5 -C cubic between AWS '
    'm5.8xlarge VMs, throughput received)',
    'licence: Apache-2.0 (Copyright the Skyplane authors, '
    'https://github.com/skyplane-project/skyplane); values derived, not copied',
    'derived: latency_ms = avg RTT / 2 of the directed pair; bandwidth_gbps = '
    'mean over the three dates of the directed pair, bits/s / 1e9',
    'caveat: bandwidths are 64-stream totals near the ~5 Gbit/s per-VM '
    'inter-region cap, not single-flow rates (single TCP flows got '
    '35-750 Mbit/s on these pairs)',
    'intra_city: 0.076 ms one-way (half the mean AWS us-west-2 same-region '
    'ping of cirquit/hivemind-multi-cloud, MIT) and 10 Gbit/s (the '
    'p3.2xlarge NIC, AWS spec "up to 10 Gigabit")',
    'latency_convention: RTT/2 (measured)',
    'synthetic_from_real: false'], list(R), measured)
write_json('worldwide-measured',
    'The worldwide layout (8 V100 p3.2xlarge in each of Oregon, Virginia, '
    'Ohio, Tokyo, Seoul, London, Frankfurt, Ireland) under Skyplane\'s '
    'measured AWS grids (Apache-2.0): one-way = ping RTT/2 (2022-04-16), '
    'bandwidth = mean of three 64-stream iperf3 grids (2022). Those are '
    'totals of 64 TCP streams near the ~5 Gbit/s per-VM cap, not '
    'single-flow rates. Inside a city: 0.076 ms, 10 Gbit/s.',
    'RTT/2 (measured)',
    [dict(name=s, devices=8, gpu='V100', nic_gbps=10, p3_2xlarge=True)
     for s in R],
    COST['worldwide'])

# --- volunteer-mix: datacentre and consumer GPUs over the same measured
# 8-city grid (Skyplane, as worldwide-measured), consumer sites behind a
# measured non-cloud access link (hivemind-multi-cloud's on-premise RTX 8000
# workstation to Google Cloud's European VMs) ---
import statistics
acc = [r for r in csv.DictReader(open(
    f'{D}/hivemind_multi_cloud/logs/experiment-set-3/3-P.0/iperf-profile-rtx8000.csv'))]
def mbit(r):
    return float(r['bandwidth']) * (1000 if r['bandwidth_metric'].startswith('G') else 1)
ACC_LAT = round(statistics.median(float(r['avg_ping_ms']) for r in acc) / 2, 3)
ACC_BW = statistics.median(mbit(r) for r in acc) / 1000
VOL = OrderedDict(   # city -> (GPU, volunteer?), 4 GPUs each
    Oregon=('A100', False), Virginia=('H100', False), Ohio=('A10G', False),
    Tokyo=('RTX4090', True), Seoul=('RTX3090', True), London=('L4', False),
    Frankfurt=('RTX4090', True), Ireland=('T4', False))
def volunteer_link(a, b):
    va, vb = VOL[a][1], VOL[b][1]
    if a == b:
        return (ACC_LAT, f'{ACC_BW:g}') if va else (AZ_LAT, 10)
    lat_ab, bw_ab = (float(x) for x in measured(a, b))
    lat_ab += ACC_LAT * (va + vb)
    if va or vb: bw_ab = min(bw_ab, ACC_BW)
    return (f'{lat_ab:.3f}', f'{bw_ab:.3f}')
write_csv('volunteer-mix', [
    'source: skyplane-project/skyplane profiles (as worldwide-measured: ICMP '
    'ping avg RTT 2022-04-16; iperf3 -P 64 grids of 2022-01-24, 01-29, 11-28 '
    'between AWS VMs) for the paths between cities; '
    'cirquit/hivemind-multi-cloud artifacts/networking/logs/experiment-set-3/'
    '3-P.0/iperf-profile-rtx8000.csv (iperf, one stream, 2023-04-10: an '
    'on-premise RTX 8000 workstation to Google Cloud T4 VMs in Europe, 5 '
    'runs: 16.52-16.97 ms RTT, 256-774 Mbit/s) for a consumer site\'s access',
    'licence: Apache-2.0 (Copyright the Skyplane authors) and MIT '
    '(cirquit/hivemind-multi-cloud); values derived, not copied',
    f'derived: between cities as worldwide-measured (RTT/2; mean of the three '
    f'64-stream grids); a consumer site (Tokyo, Seoul, Frankfurt) adds its '
    f'access leg, {ACC_LAT} ms one-way (median RTT / 2) and at most '
    f'{ACC_BW:g} Gbit/s (median), to every path it is on, once per consumer '
    f'end; inside a consumer site (volunteers of one city) the access leg '
    f'alone: {ACC_LAT} ms, {ACC_BW:g} Gbit/s; inside a datacentre city '
    f'0.076 ms and 10 Gbit/s as worldwide-measured',
    'caveat: composed, not measured end to end: no public measurement joins '
    'a home GPU to a cloud region on another continent; the access figure '
    'is one workstation\'s university link, not a household\'s',
    'latency_convention: RTT/2 (measured)',
    'synthetic_from_real: false'], list(VOL), volunteer_link)
def vol_site(city):
    gpu, vol = VOL[city]
    if vol:   # a volunteer's machine: NCCL's default one socket, no cloud cap
        return OrderedDict(name=city, devices=4, gpu=gpu, nic_gbps=1,
                           nic='generic')
    return OrderedDict(name=city, devices=4, gpu=gpu, nic_gbps=10,
                       nic=NIC_AWS, flow_gbps=AWS_FLOW_GBPS)
j = OrderedDict(
    name='volunteer-mix',
    description='Datacentre and consumer GPUs in the 8 cities of '
    'worldwide-measured, 4 per city: A100 (Oregon), H100 (Virginia), A10G '
    '(Ohio), L4 (London), T4 (Ireland) on cloud hosts with 10 Gbit/s NICs; '
    'volunteers\' RTX 4090 (Tokyo, Frankfurt) and RTX 3090 (Seoul) behind a '
    'measured non-cloud access link (8.4 ms, 0.43 Gbit/s: an on-premise '
    'workstation to Google Cloud, hivemind-multi-cloud, MIT) and gigabit '
    'Ethernet. Between cities: Skyplane\'s measured AWS grids (Apache-2.0). '
    'GPT-3 6.7B, 8 stages x 4 replicas. GPU efficiency: the V100\'s fitted '
    'fraction of each datasheet peak (models/spec.c), not measured.',
    seed=1, latency_convention='RTT/2 (measured)',
    sites=[vol_site(c) for c in VOL],
    network=OrderedDict(shaping=SHAPING, trace='volunteer-mix.csv'),
    workload=OrderedDict(model='gpt3-6.7b', layers=32, batch=256,
                         micro_batch=1, stages=8, replicas=4,
                         micro_batches_per_pass=32, schedule='gpipe',
                         dp_algo='central-ps', recompute=True,
                         runtime='dtfm'))
with open(f'{OUT}/volunteer-mix.json', 'w') as f:
    text = json.dumps(j, indent=2)
    for s_ in j['sites']:
        pretty = json.dumps(s_, indent=2).replace('\n', '\n    ')
        text = text.replace('    ' + pretty, '    ' + json.dumps(s_), 1)
    f.write(text + '\n')

# --- DT-FM's measured iteration times, the calibration (facts with their
# source, restated in one long table; shared/data/dtfm_measured) ---
def measured(name):
    f = open(f'{D}/dtfm_measured/{name}')
    return [r for r in csv.DictReader(l for l in f if not l.startswith('#'))]
cal = []
for r in measured('pipeline_8stage_fp16.csv'):
    cal.append(('pipeline', r['network'], r['delay_ms'], r['bandwidth_gbps'],
                str(8 * int(r['layers_per_stage'])), r['batch'], '', 'dtfm',
                r['iteration_s']))
for r in measured('homogeneous_64gpu.csv'):
    for col, system in (('dtfm_s', 'dtfm'), ('megatron_p8d8_s', 'megatron')):
        if r[col]:
            cal.append(('homogeneous', r['network'], r['delay_ms'],
                        r['bandwidth_gbps'], r['layers'], '1024', '', system,
                        r[col]))
for r in measured('p2p_send_recv.csv'):
    for size, mib in (('64mib', 64), ('128mib', 128)):
        for lib in ('nccl', 'gloo'):
            cal.append(('p2p', r['setting'], r['delay_ms'], r['bandwidth_gbps'],
                        '', '', str(mib * 1048576), lib,
                        f"{float(r[f'{lib}_{size}_ms']) / 1000:g}"))
for r in measured('geo_64gpu_L24.csv'):
    for col, system in (('megatron_p8_s', 'megatron'),
                        ('megatron_random_s', 'megatron_random'),
                        ('dtfm_wo_scheduler_s', 'dtfm_random'),
                        ('dtfm_w_scheduler_s', 'dtfm')):
        if r[col]:
            cal.append(('geo', r['scenario'], '', '', r['layers'], r['batch'],
                        '', system, r[col]))
with open(f'{OUT}/calibration.csv', 'w') as f:
    f.write('# source: DS3Lab/Decentralized_FM_alpha @ cb03043b (2023-03-08), the '
            'authors\' experiment log: results/gpt3_xl_fp16.md (pipeline, '
            'homogeneous), results/network_benchmarks.md (p2p), '
            'results/NeurIPS2022_submission.md (geo), as transcribed in '
            'shared/data/dtfm_measured\n')
    f.write('# licence: none stated; measured facts with their source, restated '
            'in this table (traces/gen/gen_builtins.py)\n')
    f.write('# tables: pipeline = one 8-stage GPipe pipeline of p3.2xlarge '
            '(layers = 8 x layers_per_stage, batch micro-batches of 1); '
            'homogeneous = 64 p3.2xlarge, 8 x 8, batch 1024; p2p = one NCCL '
            '(16 sockets) or Gloo (1 socket) message between two p3.2xlarge, '
            'delay on one direction; geo = the five cases at 24 layers\n')
    f.write('# systems: dtfm = DT-FM runtime on the identity placement, '
            'dtfm_random = on random rank maps (mean of 3), megatron = '
            'Megatron-LM P8 D8 with its rank order, megatron_random = with '
            'random rank maps (mean of 3); p2p: nccl, gloo\n')
    f.write('# units: delay_ms one-way tc delay (empty: none), bandwidth_gbps '
            'tc rate (empty: none, the NIC), measured_s seconds\n')
    f.write('table,setting,delay_ms,bandwidth_gbps,layers,batch,bytes,system,'
            'measured_s\n')
    for row in cal:
        f.write(','.join(row) + '\n')
print('ok')
