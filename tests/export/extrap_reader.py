"""Reads a file the way Extra-P 4.2.5's `extrap --json FILE` does, without Extra-P.

Extra-P is on PyPI only, which this project's machines cannot reach. This module follows its
reader step by step, so that a file it accepts is one Extra-P reads, and a file Extra-P rejects
fails here with Extra-P's reason:

- extrap/fileio/file_reader/json_file_reader.py, JsonFileReader.read_experiment (`--json`):
  json.load of the whole file; when that fails, the file is JSON Lines if some line starts with
  '{' and every line starts with '{' or is blank, else the JSON error is the file's error;
- extrap/fileio/file_reader/jsonlines_file_reader.py, read_jsonlines_file: per line `params`
  (required; its keys on the first line fix the parameters, and every later line must have them),
  `callpath` and `metric` (optional: '<root>' and '<default>'), `value` (required; a number, as
  numpy's masked median and mean of the repetitions need); lines of the same callpath, metric and
  coordinate are repetitions;
- extrap/fileio/io_helper.py: repetition_dict_to_experiment (callpaths, metrics, coordinates in
  order of first appearance), create_call_tree (callpaths split at '->', level by level) and
  validate_experiment (parameters, coordinates, metrics, callpaths and a call tree present; every
  (callpath, metric) measured at every coordinate).

read(path) returns an Experiment or raises FormatError with the message Extra-P would give.
"""
import json
import numbers


class FormatError(Exception):
    pass


class Node:
    def __init__(self, name, path):
        self.name, self.path, self.childs = name, path, []

    def find_child(self, name):
        return next((c for c in self.childs if c.name == name), None)


class Experiment:
    def __init__(self):
        self.parameters, self.coordinates, self.metrics, self.callpaths = [], [], [], []
        self.measurements = {}  # (callpath, metric) -> {coordinate: [values]}
        self.call_tree = Node("<root>", None)


def _add_unique(lst, item):
    if item not in lst:
        lst.append(item)


def _is_jsonlines(path):
    with open(path) as f:
        lines = iter(f)
        # As Extra-P: any() stops at the first '{' line and all() goes on from the next one.
        return any(ln.strip().startswith("{") for ln in lines) and \
            all(ln.strip().startswith("{") or ln.strip() == "" for ln in lines)


def _read_lines(path):
    complete, parameters = {}, None
    with open(path) as f:
        for ln, line in enumerate(f):
            if line.isspace():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise FormatError(f'Decoding of line {ln} failed: {e}. Line: "{line}"')
            try:
                key = (data.get("callpath", "<root>"), data.get("metric", "<default>"))
                if parameters is None:
                    parameters = list(data["params"].keys())
                coordinate = tuple(data["params"][p] for p in parameters)
                value = data["value"]
            except KeyError as e:
                raise FormatError(f'Missing property in line {ln}: {e}. Line: "{line}"')
            except (AttributeError, TypeError):
                raise FormatError(f"line {ln}: params is not an object")
            values = value if isinstance(value, list) else [value]
            if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
                raise FormatError(f"line {ln}: value {value!r} is not a number")
            if not all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in coordinate):
                raise FormatError(f"line {ln}: a parameter value is not a number: {coordinate}")
            complete.setdefault(key, {}).setdefault(coordinate, []).extend(values)
    return complete, parameters or []


def _call_tree(exp):
    split = [cp.split("->") for cp in exp.callpaths]
    for i in range(max((len(s) for s in split), default=0)):
        for cp, parts in zip(exp.callpaths, split):
            if i >= len(parts):
                continue
            parent = exp.call_tree
            for name in parts[:i]:  # find_root_node: the levels above, each found by name
                parent = parent.find_child(name)
            child = parent.find_child(parts[i])
            leaf = i == len(parts) - 1
            if child is None:
                parent.childs.append(Node(parts[i], cp if leaf else None))
            elif leaf and child.path is None:
                child.path = cp


def _validate(exp):
    def require(cond, message):
        if not cond:
            raise FormatError(message)
    require(exp.parameters, "Parameters are missing.")
    require(exp.coordinates, "Coordinates are missing.")
    require(exp.metrics, "Metrics are missing.")
    require(exp.callpaths, "Callpaths are missing.")
    require(exp.call_tree.childs, "Calltree is missing.")
    for c in exp.coordinates:
        require(len(c) == len(exp.parameters), f"coordinate {c} does not match the parameters")
    for k, m in exp.measurements.items():
        require(len(m) == len(exp.coordinates),
                f"The number of measurements ({len(m)}) for {k} does not match the number of "
                f"coordinates ({len(exp.coordinates)}).")


def read(path):
    with open(path) as f:
        try:
            json.load(f)
            raise FormatError("the file is one JSON document, not JSON Lines (Extra-P reads it "
                              "as its JSON format, which needs 'parameters' and 'measurements')")
        except json.JSONDecodeError as e:
            if not _is_jsonlines(path):
                raise FormatError(str(e))
    complete, parameters = _read_lines(path)
    exp = Experiment()
    exp.parameters = parameters
    for (callpath, metric), points in complete.items():
        _add_unique(exp.callpaths, callpath)
        _add_unique(exp.metrics, metric)
        for coordinate in points:
            _add_unique(exp.coordinates, coordinate)
        exp.measurements[(callpath, metric)] = points
    _call_tree(exp)
    _validate(exp)
    return exp
