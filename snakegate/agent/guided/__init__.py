"""The offline guided dialogue: `dialogue` (the Backend), `fill` (one question per param),
`parse` (reading what was typed, pure) and `text` (wording, pure).
"""
