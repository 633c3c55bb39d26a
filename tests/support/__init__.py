"""What the tests share: process harnesses, test clients, problem checks, strategies.

Nothing here is a test: the test modules import from here, never from each other.
"""
