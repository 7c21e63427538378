#!/usr/bin/env python3
"""Test oracle for output_parser_template_test: renders assistant turns through the real Qwen chat
templates (Jinja2, as Hugging Face applies them) and prints, as JSON, the text a model would
generate for each turn next to the message it stands for. The parser must recover the message.

Usage: render_turns_oracle.py SHARED_DIR
Turns: the assistant tool calls captured from real clients (SHARED_DIR/testdata/captures), with
those clients' tool lists, plus richer turns built on the same tools.
"""
import json
import os
import sys

import jinja2

CAPTURES = [
    "qwen-tool/002-POST-_v1_chat_completions.json",
    "qwen024-tool/002-POST-_v1_chat_completions.json",
    "opencode-tool-a/003-POST-_v1_chat_completions.json",
    "pi-tool-a/002-POST-_v1_chat_completions.json",
]
TEMPLATES = {"xml": "Qwen3.5-4B.jinja", "json": "Qwen-Qwen3-0.6B.jinja"}
ASSISTANT_OPEN = "<|im_start|>assistant\n<think>\n"


def hf_tojson(value, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def load_request(shared, path):
    with open(os.path.join(shared, "testdata", "captures", path)) as f:
        body = json.load(f)["body"]
    return json.loads(body) if isinstance(body, str) else body


def call(name, arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def synthetic_turns():
    """Turns on the captured tools (qwen-code's edit, run_shell_command, todo_write, read_file,
    list_directory; opencode's bash and read) with typed, multi-line and unicode arguments."""
    old = 'def main():\n    print("hello")\n'
    new = 'def main():\n    print("hello, world")\n\n\nif __name__ == "__main__":\n    main()\n'
    return [
        ("qwen-tool/001-POST-_v1_chat_completions.json", {
            "reasoning_content": "The greeting is wrong.\nI should edit main.py, then run it.",
            "content": "I'll fix the greeting and run the script.",
            "tool_calls": [
                call("edit", {"file_path": "/home/user/demo/main.py", "old_string": old,
                              "new_string": new, "replace_all": False}),
                call("run_shell_command", {"command": "cd /home/user/demo && python3 main.py",
                                           "is_background": False, "timeout": 30000,
                                           "description": "Run main.py </tool_call> check"}),
            ]}),
        ("qwen-tool/001-POST-_v1_chat_completions.json", {
            "reasoning_content": "Plan the work first.",
            "content": "",
            "tool_calls": [
                call("todo_write", {"todos": [
                    {"id": "1", "content": "Lire « main.py » 📄", "status": "completed"},
                    {"id": "2", "content": "修正する", "status": "in_progress"}]}),
                call("read_file", {"file_path": "/home/user/demo/main.py", "offset": 10,
                                   "limit": 50}),
                call("list_directory", {"path": "/home/user/demo",
                                        "ignore": ["*.pyc", "__pycache__"]}),
            ]}),
        ("opencode-tool-a/002-POST-_v1_chat_completions.json", {
            "reasoning_content": "",
            "content": "Running the tests.\n\nThen reading the log.",
            "tool_calls": [
                call("bash", {"command": "pytest -q 2>&1 | tail -n 20\necho \"done\"",
                              "timeout": 120000, "workdir": "/home/user/demo"}),
                call("read", {"filePath": "/home/user/demo/log.txt", "offset": 1, "limit": 200}),
            ]}),
    ]


def captured_turns(shared):
    turns = []
    for path in CAPTURES:
        for message in load_request(shared, path)["messages"]:
            if message["role"] != "assistant" or not message.get("tool_calls"):
                continue
            calls = [call(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in message["tool_calls"]]
            turns.append((path, {"reasoning_content": "Reading the file the user named.",
                                 "content": message.get("content") or "", "tool_calls": calls}))
    return turns


def render(env, syntax, tools, assistant):
    template = env.get_template(TEMPLATES[syntax])
    messages = [{"role": "user", "content": "Please fix main.py."},
                dict(assistant, role="assistant")]
    text = template.render(messages=messages, tools=tools, add_generation_prompt=False)
    start = text.rindex(ASSISTANT_OPEN) + len(ASSISTANT_OPEN)
    return text[start:text.index("<|im_end|>", start)]


def main():
    shared = sys.argv[1]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(shared, "testdata", "templates")),
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = hf_tojson
    env.globals["raise_exception"] = raise_exception
    cases = []
    for path, assistant in captured_turns(shared) + synthetic_turns():
        tools = load_request(shared, path)["tools"]
        for syntax in TEMPLATES:
            cases.append({
                "name": f"{path} ({syntax})",
                "syntax": syntax,
                "tools": tools,
                "text": render(env, syntax, tools, assistant),
                "reasoning": assistant["reasoning_content"].strip(),
                "content": assistant["content"].strip(),
                "tool_calls": [{"name": c["function"]["name"],
                                "arguments": c["function"]["arguments"]}
                               for c in assistant["tool_calls"]],
            })
    json.dump(cases, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
