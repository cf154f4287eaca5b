"""The platform actions: the only things a model (LLM or guided dialogue) can make snakegate do.

`platform` lists them and dispatches a call; `base` is what an action is made of; `data`,
`registry`, `plans`, `runs`, `refine` hold the handlers; `limits` bounds what a model can ask and see; `wire` maps the
actions to the OpenAI `tools` format and the constrained-JSON step schema.
"""
