"""The cost-model side of geodes's --cost-cmd protocol (analysis/costcmd.h),
standard library only, shared by the example models of this folder.

serve(make_model) reads the header line, builds model = make_model(header),
then answers every candidate line {"id": k, "pipelines": [[...]],
"layers_per_stage": [...]} with {"id": k, "predicted_s": model(candidate)}.
It reads whatever geodes has sent, answers all of it with one write, and
only then blocks for more: a batch is answered in bulk, and a search that
sends one candidate and waits gets its answer at once.

--misbehave MODE[:K] makes the model fail on purpose at candidate K (default
0), so that geodes's handling of each failure can be tested end to end:
exit (exit with status 3 before answering), hang (stop answering),
garbage (a line that is not JSON), wrong-id, negative, nan (Python's NaN,
which is not JSON), missing (no predicted_s), extra (one more line than
asked), status (answer everything, then exit with status 4), huge (a
predicted_s of 1e400, past a double), bigid (an id of 2^64, past an
integer), nul (a NUL byte inside the line), dup-key (predicted_s twice),
dup-id (id twice), absurd (a predicted_s of 1e308 s, a double but past
geodes's ceiling).
"""
import json
import os
import sys
import time

MODES = ('exit', 'hang', 'garbage', 'wrong-id', 'negative', 'nan', 'missing',
         'extra', 'status', 'huge', 'bigid', 'nul', 'dup-key', 'dup-id',
         'absurd')


def parse_misbehave(argv):
    """(mode, k) from --misbehave MODE[:K] in argv, or (None, -1)."""
    if '--misbehave' not in argv:
        return None, -1
    i = argv.index('--misbehave')
    if i + 1 >= len(argv):
        sys.exit('--misbehave needs MODE[:K]')
    mode, _, k = argv[i + 1].partition(':')
    if mode not in MODES:
        sys.exit(f'--misbehave: unknown mode {mode!r} (known: {", ".join(MODES)})')
    return mode, int(k or 0)


def _write(lines):
    data = memoryview(''.join(lines).encode())
    while data:
        data = data[os.write(1, data):]


def _answer(cand, value, mode, at, out):
    """The answer line for cand, spoiled when mode applies to it; out holds
    the answers not yet written (written first when the model stops)."""
    k = cand['id']
    if mode is None or k != at or mode == 'status':
        return f'{{"id": {k}, "predicted_s": {value!r}}}\n'
    if mode in ('exit', 'hang'):
        _write(out)
        out.clear()
        if mode == 'exit':
            os._exit(3)
        time.sleep(3600)
    if mode == 'garbage':
        return 'predicted: soon\n'
    if mode == 'wrong-id':
        return f'{{"id": {k + 1}, "predicted_s": {value!r}}}\n'
    if mode == 'negative':
        return f'{{"id": {k}, "predicted_s": {-value!r}}}\n'
    if mode == 'nan':
        return json.dumps({'id': k, 'predicted_s': float('nan')}) + '\n'
    if mode == 'missing':
        return f'{{"id": {k}}}\n'
    if mode == 'huge':
        return f'{{"id": {k}, "predicted_s": 1e400}}\n'
    if mode == 'bigid':
        return f'{{"id": {2**64}, "predicted_s": {value!r}}}\n'
    if mode == 'dup-key':
        return f'{{"id": {k}, "predicted_s": {value!r}, "predicted_s": {value!r}}}\n'
    if mode == 'dup-id':
        return f'{{"id": {k}, "id": {k}, "predicted_s": {value!r}}}\n'
    if mode == 'absurd':
        return f'{{"id": {k}, "predicted_s": 1e308}}\n'
    if mode == 'nul':
        return f'{{"id": {k}, "predicted_s": {value!r}\0}}\n'
    return f'{{"id": {k}, "predicted_s": {value!r}}}\n{{"id": {k}, "predicted_s": 0}}\n'


def serve(make_model, argv=None):
    """Runs the protocol on stdin/stdout until geodes closes stdin."""
    argv = sys.argv[1:] if argv is None else argv
    if '-h' in argv or '--help' in argv:  # the model's own docstring
        doc = getattr(sys.modules.get('__main__'), '__doc__', None)
        print('usage: geodes schedule|validate|sweep ... --cost-cmd '
              '"python3 %s [--misbehave MODE[:K]]"\n\n%s'
              % (sys.argv[0], (doc or __doc__).strip()))
        return
    mode, at = parse_misbehave(argv)
    model = None
    pending = b''
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        lines = (pending + chunk).split(b'\n')
        pending = lines.pop()
        out = []
        for line in lines:
            if not line.strip():
                continue
            msg = json.loads(line)
            if model is None:
                model = make_model(msg)
                continue
            out.append(_answer(msg, model(msg), mode, at, out))
        _write(out)
    if mode == 'status':
        sys.exit(4)
