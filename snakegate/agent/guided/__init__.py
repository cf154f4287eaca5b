"""The offline guided dialogue: `dialogue` (the Backend), `fill` (one question per param),
`plan` (a chain of workflows as a plan, step by step), `parse` (reading what was typed, pure) and
`text` (wording, pure).
"""
