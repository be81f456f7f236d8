#!/usr/bin/env python3
"""Generates traces/data/intellect-1{-usa,-usa-europe,}.{json,csv}: the
cross-continent DiLoCo run of INTELLECT-1 (Prime Intellect, Nov 2024) as
three built-in scenarios, one per row of the report's table 2 (USA, USA +
Europe, global), from Skyplane's measured AWS grids in the shared data
folder (GEODES_SHARED_DATA, default ../shared/data beside the repository).
Run once by hand when the data changes; the build never runs it and the
program never reads that folder. `--csv-only` writes the network traces
alone.

What is published (sources):
  [R] Jaghouar et al., "INTELLECT-1 Technical Report", arXiv 2412.01152
      (Dec 2024): a 10B Llama-3-style model trained on 1T tokens by up to
      14 concurrent nodes of 8 H100 (112 GPUs) on 3 continents, 5
      countries; DiLoCo with 100 inner steps; pseudo-gradients all-reduced
      as int8 over a ring; table 2: 38 min of compute per 100 inner steps
      (no communication: MFU 43.3 %), median all-reduce 103 s (USA), 382 s
      (USA + Europe), 469 s (global), compute utilisation 95.7 / 85.6 /
      83.0 % ("the proportion of time the training is not communicating
      with other nodes"); the abstract rounds to 83-96 %; bandwidth between
      nodes varied from 500 Mbit/s to 4 Gbit/s. Table 2 and the bandwidth
      range as transcribed in DataCrunch's write-up of the report (a copy
      in the search index; the report's own PDF was not readable here).
  [C] PrimeIntellect-ai/prime, configs/10B/H100_intellect1.toml: model
      "10B" llama3, seq_length 8192, batch_size 128 (per node, "1M tokens"),
      micro_batch_size 1, act_ckpt true, diloco inner_steps 100,
      compression "uint8".
  [M] PrimeIntellect-ai/prime, src/zeroband/models/llama/__init__.py,
      llama3_configs["10B"]: dim 4096, n_layers 42, n_heads 32, n_kv_heads
      8, ffn_dim_multiplier 1.3, multiple_of 1024 (so the FFN is 14336
      wide), vocabulary 128256 (the Llama-3 tokenizer; the model card).
  [A] PrimeIntellect-ai/prime, src/zeroband/C/csrc/collectives.cpp and
      diloco.py: the int8 ring all-reduce runs on the CPU over Gloo (one TCP
      connection to each ring neighbour), each of a node's 8 local ranks
      reducing its FSDP shard of the pseudo-gradient with the same rank of
      the other nodes: 8 rings side by side, one socket each.

What is assumed (the report names neither the cities nor how many nodes
each configuration had):
  - Each node is one device of GPU type HGX-H100 (8 H100 SXM with NVLink
    under FSDP, which geodes does not split): 8x an H100's peak, memory and
    memory bandwidth (models/spec.c). A node's micro-batch is 8 sequences
    (one per GPU, micro_batch_size 1), 16 accumulation steps make the
    node's 128.
  - Nodes: USA 8 (2 each in Oregon, N. California, Ohio, Virginia), USA +
    Europe 12 (+ London, Ireland, Stockholm, Frankfurt), global 14 (+
    Singapore, Tokyo): the report's 14 concurrent nodes at most, on the
    three continents of its map; the AWS regions stand in for the
    providers' data centres because they are the cities with measurements.
    Sites are listed in ring order (geodes's ring is the replica order).
  - Between cities: Skyplane's measured AWS grids (the one-way delay is
    half the ping RTT, 2022-04-16; the bandwidth the mean of three iperf3
    -P 64 grids, 2022), which sit at the top of the report's 0.5-4 Gbit/s.
    Inside a city (two nodes of one region): 0.076 ms, 10 Gbit/s, as in
    worldwide-measured. NIC 10 Gbit/s per node (never binding below these).
  - nccl_sockets 8: the 8 Gloo rings of [A], one socket each.
  - runtime megatron: of geodes's two runtimes the one whose optimizer
    steps on the GPU (FSDP's AdamW); with one stage per replica it makes
    no pipeline calls. DT-FM's runtime would offload Adam to the host.
"""
import csv, json, os, sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
D = os.environ.get('GEODES_SHARED_DATA', os.path.join(HERE, '../../../shared/data'))
OUT = os.path.join(HERE, '../data')
HDR = 't_s,src,dst,latency_ms,bandwidth_gbps'
AZ_LAT, AZ_BW = 0.076, 10     # inside one region, as worldwide-measured

# Site -> (AWS region, nodes): in ring order.
USA = [('Oregon', 'us-west-2', 2), ('California', 'us-west-1', 2),
       ('Ohio', 'us-east-2', 2), ('Virginia', 'us-east-1', 2)]
EUROPE = [('London', 'eu-west-2', 1), ('Ireland', 'eu-west-1', 1),
          ('Stockholm', 'eu-north-1', 1), ('Frankfurt', 'eu-central-1', 1)]
ASIA = [('Singapore', 'ap-southeast-1', 1), ('Tokyo', 'ap-northeast-1', 1)]
SCENARIOS = [
    ('intellect-1-usa', USA, 'USA', 103, 95.7),
    ('intellect-1-usa-europe', USA + EUROPE, 'USA + Europe', 382, 85.6),
    ('intellect-1', USA + EUROPE + ASIA, 'global', 469, 83.0),
]
INNER_STEPS = 100
SEQ_PER_NODE = 128            # [C] batch_size
NODE_MICRO_BATCH = 8          # one sequence on each of the 8 GPUs


def skyplane(regions):
    """(lat_ms one-way, bw_gbps) per ordered pair of AWS regions."""
    want = {'aws:' + r for r in regions}
    lat, bw = {}, {}
    for r in csv.DictReader(open(f'{D}/skyplane/latency_grid_2022-04-16_v2.csv')):
        if r['src_region'] in want and r['dst_region'] in want:
            lat[(r['src_region'][4:], r['dst_region'][4:])] = float(r['avg_rtt']) / 2
    for d in ['2022-01-24', '2022-01-29', '2022-11-28']:
        for r in csv.DictReader(open(f'{D}/skyplane/throughput_grid_{d}_64conn.csv')):
            if r['src_region'] in want and r['dst_region'] in want and \
               r['success'] == 'True':
                rx = r.get('throughput_received') or r.get('throughput_recieved')
                bw.setdefault((r['src_region'][4:], r['dst_region'][4:]),
                              []).append(float(rx) / 1e9)
    n = len(regions) * (len(regions) - 1)
    assert len(lat) == n and len(bw) == n, (len(lat), len(bw), n)
    assert all(len(v) == 3 for v in bw.values())
    return lat, {k: sum(v) / 3 for k, v in bw.items()}


def write_csv(name, sites):
    regions = [r for _, r, _ in sites]
    lat, bw = skyplane(regions)
    with open(f'{OUT}/{name}.csv', 'w') as f:
        for c in [
            'source: skyplane-project/skyplane profiles/latency.csv (ICMP ping '
            '-c 10, 2022-04-16, avg_rtt) and profiles/throughput.csv grids of '
            '2022-01-24, 2022-01-29 and 2022-11-28 (iperf3 -P 64 -t 5 -C cubic '
            'between AWS m5.8xlarge VMs, throughput received)',
            'licence: Apache-2.0 (Copyright the Skyplane authors, '
            'https://github.com/skyplane-project/skyplane); values derived, '
            'not copied',
            'derived: latency_ms = avg RTT / 2 of the directed pair; '
            'bandwidth_gbps = mean over the three dates of the directed pair, '
            'bits/s / 1e9 (traces/gen/gen_intellect1.py)',
            'sites: ' + ', '.join(f'{s} = aws:{r}' for s, r, _ in sites) +
            ' (stand-ins for INTELLECT-1\'s unpublished node locations)',
            'intra_city: 0.076 ms one-way (half the mean AWS us-west-2 '
            'same-region ping of cirquit/hivemind-multi-cloud, MIT) and '
            '10 Gbit/s',
            'caveat: 64-stream totals near the ~5 Gbit/s per-VM inter-region '
            'cap: the top of the 0.5-4 Gbit/s INTELLECT-1 reported between '
            'its nodes',
            'latency_convention: RTT/2 (measured)',
            'synthetic_from_real: false']:
            f.write(f'# {c}\n')
        f.write(HDR + '\n')
        for a, ra, _ in sites:
            for b, rb, _ in sites:
                v = (AZ_LAT, AZ_BW) if a == b else \
                    (f'{lat[(ra, rb)]:.3f}', f'{bw[(ra, rb)]:.3f}')
                f.write(f'0,{a},{b},{v[0]},{v[1]}\n')


def write_json(name, sites, label, sync_s, util):
    nodes = sum(n for _, _, n in sites)
    desc = (f'INTELLECT-1 (Jaghouar et al. 2024, arXiv 2412.01152), the '
            f'{label} configuration of its table 2: {nodes} nodes of 8 H100 '
            f'(one HGX-H100 device each) training a 10B Llama-3-style model '
            f'(42 layers, h 4096, 8192 tokens) with DiLoCo, {INNER_STEPS} '
            f'inner steps of 128 sequences per node, int8 pseudo-gradients '
            f'over a ring. Published: median all-reduce {sync_s} s, compute '
            f'utilisation {util} %. Node cities are not published: AWS '
            f'regions stand in (' + ', '.join(
                f'{s} {n}' for s, _, n in sites) +
            '), Skyplane\'s measured grids between them '
            '(traces/gen/gen_intellect1.py says what is assumed).')
    j = OrderedDict(
        name=name, description=desc, seed=1,
        latency_convention='RTT/2 (measured)',
        sites=[OrderedDict(name=s, devices=n, gpu='HGX-H100', nic_gbps=10,
                           nccl_sockets=8) for s, _, n in sites],
        # per-VM measured rates (Skyplane's 64-stream VM-pair grids): each
        # sender's egress shaped, tc (traces/FORMATS.md); the hosts' window
        # is the OS default (no tcp_window_bytes)
        network=OrderedDict(shaping='tc', trace=f'{name}.csv'),
        workload=OrderedDict(
            model='intellect-1', layers=42, batch=SEQ_PER_NODE * nodes,
            micro_batch=NODE_MICRO_BATCH, stages=1, replicas=nodes,
            micro_batches_per_pass=SEQ_PER_NODE // NODE_MICRO_BATCH,
            schedule='gpipe', dp_algo='diloco', inner_steps=INNER_STEPS,
            grad_bits=8, recompute=True, runtime='megatron'))
    text = json.dumps(j, indent=2)
    for s_ in j['sites']:
        pretty = json.dumps(s_, indent=2).replace('\n', '\n    ')
        text = text.replace('    ' + pretty, '    ' + json.dumps(s_), 1)
    with open(f'{OUT}/{name}.json', 'w') as f:
        f.write(text + '\n')


for name, sites, label, sync_s, util in SCENARIOS:
    write_csv(name, sites)
    if '--csv-only' not in sys.argv:
        write_json(name, sites, label, sync_s, util)
print('ok')
